"""Bearer tokens, their life cycle, and the three roles.

Tokens are random, shown once, and stored only as SHA-256 hashes; lookups go by hash and the
final comparison is constant-time, so neither the table nor timing reveals a token. A token
records who issued it; it may expire (staff tokens always do) and be revoked, and every
worker refuses a revoked token within a second of the revocation committing (the
authenticator remembers a token for one second at most).
"""

import hashlib
import hmac
import secrets
import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from enum import StrEnum
from functools import partial
from typing import Any

from sqlalchemy import update
from sqlalchemy.orm import Session

from api.db.database import Database
from api.db.kept import Reads
from api.db.models import ApiToken
from api.domain.tokens.throttle import FailureThrottle
from api.errors import Forbidden, Throttled, Unauthenticated
from ledger.driver import Sql, driver_of

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
    name: str | None = None
    expires_at: datetime | None = None

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
    session: Session,
    role: Role,
    *,
    name: str | None = None,
    player_id: int | None = None,
    issued_by: int | None = None,
    ttl: timedelta | None = None,
) -> str:
    """Create a token, store its hash, and return the token itself (the only time it exists).

    `issued_by` is the issuing token (None: the command line); `ttl` None never expires."""
    return issue(session, role, name=name, player_id=player_id, issued_by=issued_by, ttl=ttl)[1]


def issue(
    session: Session,
    role: Role,
    *,
    name: str | None = None,
    player_id: int | None = None,
    issued_by: int | None = None,
    ttl: timedelta | None = None,
) -> tuple[ApiToken, str]:
    """`issue_token`, also returning the stored row (its id names it in events)."""
    token = TOKEN_PREFIX + secrets.token_urlsafe(32)
    now = datetime.now(UTC)
    row = ApiToken(
        token_hash=hash_token(token),
        role=role.value,
        name=name,
        player_id=player_id,
        created_at=now,
        issued_by=issued_by,
        expires_at=None if ttl is None else now + ttl,
    )
    session.add(row)
    session.flush()
    return row, token


def _presented_hash(authorization: str | None) -> str:
    if not authorization:
        raise Unauthenticated("an Authorization: Bearer token is required")
    scheme, _, token = authorization.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise Unauthenticated("the Authorization header must be 'Bearer <token>'")
    return hash_token(token.strip())


_TOKEN_BY_HASH = Sql.of(
    "SELECT id, token_hash, role, player_id, name, expires_at, revoked_at, last_used_at"
    " FROM api_tokens WHERE token_hash = :token_hash"
)


def _looked_up(driver: Reads, presented: str) -> tuple[Principal, datetime | None]:
    """The caller whose token hashes to `presented`, and when the token was last used; one
    statement on the driver, for every request of a caller not in memory runs it."""
    row = driver.first(_TOKEN_BY_HASH, {"token_hash": presented})
    if row is None or not hmac.compare_digest(row[1], presented):
        raise Unauthenticated("the token is not valid")
    token_id, _, role, player_id, name, expires_at, revoked_at, last_used_at = row
    if revoked_at is not None:
        raise Unauthenticated("the token was revoked", code="token_revoked")
    principal = Principal(
        token_id=token_id,
        role=Role(role),
        player_id=player_id,
        name=name,
        expires_at=_read_time(driver, expires_at),
    )
    _refuse_if_expired(principal)
    return principal, _read_time(driver, last_used_at)


def _read_time(driver: Reads, stored: Any) -> datetime | None:
    return None if stored is None else driver.read_time(stored)


def _refuse_if_expired(principal: Principal) -> None:
    if principal.expires_at is not None and principal.expires_at <= datetime.now(UTC):
        raise Unauthenticated("the token has expired", code="token_expired")


def authenticate(session: Session, authorization: str | None) -> Principal:
    return _looked_up(driver_of(session), _presented_hash(authorization))[0]


class Authenticator:
    """Resolves bearer tokens, remembering valid ones for a second.

    Every request authenticates; without the cache that is a query (and, on SQLite, a
    transaction) per request on the hot path. A second bounds how long a revoked token can
    go on working in a worker that saw it just before, and still answers nearly every
    request of a busy client from memory: one look-up a second per token per worker. The
    look-up also notes when the token was last used, at most once a minute.
    """

    def __init__(
        self,
        database: Database,
        *,
        ttl_seconds: float = 1.0,
        max_entries: int = 10_000,
        failures_per_minute: int = 20,
    ) -> None:
        self._database = database
        self._ttl = ttl_seconds
        self._max_entries = max_entries
        self._known: dict[str, tuple[Principal, float]] = {}
        self._throttle = FailureThrottle(failures_per_minute)

    def remembered(self, authorization: str | None) -> Principal | None:
        """The caller if their token is in memory and fresh, else None; never a query, so
        the event loop may call it (a malformed header is refused here too)."""
        return self._fresh(_presented_hash(authorization))

    async def known_caller(self, authorization: str | None, address: str) -> Principal | None:
        """The caller `resolve` would answer with, from memory or looked up, or None
        wherever it would refuse (a throttled address, an unknown, revoked or expired token,
        a malformed header). It counts no failure, so a refused request can still go
        through `resolve` afterwards, which refuses it and counts the failure."""
        if self._throttle.retry_after(address) is not None:
            return None
        try:
            return await self._principal_on_loop(authorization)
        except Unauthenticated:
            return None

    async def resolve(self, authorization: str | None, address: str = "unknown") -> Principal:
        """`principal` from the event loop. Every request authenticates, and a look-up in
        the database costs far more than the dictionary look-up that answers nearly all of
        them.

        A client address that failed too often lately is refused before anything else
        (429), and every failure counts against it."""
        retry_after = self._throttle.retry_after(address)
        if retry_after is not None:
            raise Throttled(retry_after)
        try:
            return await self._principal_on_loop(authorization)
        except Unauthenticated:
            if self._throttle.failed(address):
                await self._database.run_units(partial(self._record_burst, address))
            raise

    async def _principal_on_loop(self, authorization: str | None) -> Principal:
        """From memory when it can, else as a unit of work off the request
        (`Database.run_units`)."""
        known = self.remembered(authorization)
        if known is not None:
            return known
        return await self._database.run_units(partial(self.principal, authorization))

    def _record_burst(self, address: str) -> None:
        # Imported here: the events log names tokens, so it imports this module.
        from api.domain.events.service import record_event

        with self._database.transaction() as session:
            record_event(
                session,
                "authentication_throttled",
                None,
                subject={"address": address},
                details={
                    "failures": self._throttle.limit,
                    "window_seconds": int(self._throttle.window),
                },
            )

    def principal(self, authorization: str | None) -> Principal:
        presented = _presented_hash(authorization)
        known = self._fresh(presented)
        if known is not None:
            return known
        with self._database.reading_alone() as driver:
            principal, last_used = _looked_up(driver, presented)
        if last_used is None or last_used < datetime.now(UTC) - LAST_USED_RESOLUTION:
            with self._database.transaction() as session:
                _note_use(session, principal.token_id)
        if len(self._known) >= self._max_entries:
            self._known.clear()
        self._known[presented] = (principal, time.monotonic() + self._ttl)
        return principal

    def _fresh(self, presented: str) -> Principal | None:
        cached = self._known.get(presented)
        if cached is None or cached[1] <= time.monotonic():
            return None
        _refuse_if_expired(cached[0])
        return cached[0]


LAST_USED_RESOLUTION = timedelta(minutes=1)


def _note_use(session: Session, token_id: int) -> None:
    session.execute(
        update(ApiToken).where(ApiToken.id == token_id).values(last_used_at=datetime.now(UTC))
    )
