"""Bearer tokens and the three roles.

Tokens are random, shown once, and stored only as SHA-256 hashes; lookups go by hash and the
final comparison is constant-time, so neither the table nor timing reveals a token.
"""

import hashlib
import hmac
import secrets
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import StrEnum

from anyio.to_thread import run_sync
from sqlalchemy import select
from sqlalchemy.orm import Session

from api.db.database import Database
from api.db.models import ApiToken
from api.errors import Forbidden, Unauthenticated

TOKEN_PREFIX = "cw_"


class Role(StrEnum):
    OPERATOR = "operator"
    AUDITOR = "auditor"
    PLAYER = "player"


@dataclass(frozen=True, slots=True)
class Principal:
    """Who is calling: a role, the token behind it, and for players their id."""

    token_id: int
    role: Role
    player_id: int | None

    @property
    def caller(self) -> str:
        """The scope of the caller's idempotency keys."""
        return f"token:{self.token_id}"

    def require(self, *roles: Role) -> None:
        if self.role not in roles:
            raise Forbidden()

    def own_player_id(self) -> int:
        """The calling player's id, for what only a player may do for themself."""
        self.require(Role.PLAYER)
        assert self.player_id is not None  # every player token names its player
        return self.player_id

    def may_see_player(self, player_id: int) -> bool:
        return self.role is not Role.PLAYER or self.player_id == player_id


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def issue_token(
    session: Session, role: Role, *, name: str | None = None, player_id: int | None = None
) -> str:
    """Create a token, store its hash, and return the token itself (the only time it exists)."""
    token = TOKEN_PREFIX + secrets.token_urlsafe(32)
    session.add(
        ApiToken(
            token_hash=hash_token(token),
            role=role.value,
            name=name,
            player_id=player_id,
            created_at=datetime.now(UTC),
        )
    )
    session.flush()
    return token


def _presented_hash(authorization: str | None) -> str:
    if not authorization:
        raise Unauthenticated("an Authorization: Bearer token is required")
    scheme, _, token = authorization.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise Unauthenticated("the Authorization header must be 'Bearer <token>'")
    return hash_token(token.strip())


def _lookup(session: Session, presented: str) -> Principal:
    row = session.scalar(select(ApiToken).where(ApiToken.token_hash == presented))
    if row is None or not hmac.compare_digest(row.token_hash, presented):
        raise Unauthenticated("the token is not valid")
    return Principal(token_id=row.id, role=Role(row.role), player_id=row.player_id)


def authenticate(session: Session, authorization: str | None) -> Principal:
    return _lookup(session, _presented_hash(authorization))


class Authenticator:
    """Resolves bearer tokens, remembering valid ones briefly.

    Every request authenticates; without the cache that is a query (and, on SQLite, a
    transaction) per request on the hot path. Tokens are never edited, so the only staleness
    is a token deleted from the database working on for up to `ttl_seconds`.
    """

    def __init__(
        self, database: Database, *, ttl_seconds: float = 60.0, max_entries: int = 10_000
    ) -> None:
        self._database = database
        self._ttl = ttl_seconds
        self._max_entries = max_entries
        self._known: dict[str, tuple[Principal, float]] = {}

    def remembered(self, authorization: str | None) -> Principal | None:
        """The caller if their token is in memory and fresh, else None; never a query, so
        the event loop may call it (a malformed header is refused here too)."""
        return self._fresh(_presented_hash(authorization))

    async def resolve(self, authorization: str | None) -> Principal:
        """`principal` from the event loop: from memory when it can, else in a worker
        thread. Every request authenticates, and a thread hop costs more CPU than the
        dictionary look-up that answers nearly all of them."""
        known = self.remembered(authorization)
        if known is not None:
            return known
        looked_up: Principal = await run_sync(self.principal, authorization)
        return looked_up

    def principal(self, authorization: str | None) -> Principal:
        presented = _presented_hash(authorization)
        known = self._fresh(presented)
        if known is not None:
            return known
        with self._database.reading() as session:
            principal = _lookup(session, presented)
        if len(self._known) >= self._max_entries:
            self._known.clear()
        self._known[presented] = (principal, time.monotonic() + self._ttl)
        return principal

    def _fresh(self, presented: str) -> Principal | None:
        cached = self._known.get(presented)
        return cached[0] if cached is not None and cached[1] > time.monotonic() else None
