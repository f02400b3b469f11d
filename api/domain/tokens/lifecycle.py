"""Tokens as staff manage them: listed (never their secret), revoked, issued with expiry.

Every issue and revocation is a significant event naming the token that asked for it.
"""

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from api.db.models import ApiToken
from api.domain.events.service import record_event
from api.domain.tokens.service import Principal, Role, issue
from api.errors import NotFound
from api.pagination import Page, decode_cursor, next_cursor


@dataclass(frozen=True, slots=True)
class TokenInfo:
    id: int
    role: str
    name: str | None
    player_id: int | None
    issued_by: int | None
    created_at: datetime
    expires_at: datetime | None
    revoked_at: datetime | None
    last_used_at: datetime | None


@dataclass(frozen=True, slots=True)
class TokenFilters:
    role: Role | None = None
    player_id: int | None = None
    active: bool | None = None


def info(row: ApiToken) -> TokenInfo:
    return TokenInfo(
        id=row.id,
        role=row.role,
        name=row.name,
        player_id=row.player_id,
        issued_by=row.issued_by,
        created_at=row.created_at,
        expires_at=row.expires_at,
        revoked_at=row.revoked_at,
        last_used_at=row.last_used_at,
    )


def list_tokens(
    session: Session, filters: TokenFilters, cursor: str | None, limit: int
) -> Page[TokenInfo]:
    query = select(ApiToken).order_by(ApiToken.id).limit(limit)
    after = decode_cursor(cursor)
    if after is not None:
        query = query.where(ApiToken.id > after)
    if filters.role is not None:
        query = query.where(ApiToken.role == filters.role.value)
    if filters.player_id is not None:
        query = query.where(ApiToken.player_id == filters.player_id)
    if filters.active is not None:
        now = datetime.now(UTC)
        live = ApiToken.revoked_at.is_(None) & (
            ApiToken.expires_at.is_(None) | (ApiToken.expires_at > now)
        )
        query = query.where(live if filters.active else ~live)
    rows = list(session.scalars(query))
    return Page(tuple(map(info, rows)), next_cursor([row.id for row in rows], limit))


def revoke(session: Session, token_id: int, actor: Principal | None) -> TokenInfo:
    """Revoke a token (at once for this transaction; within a second for every worker).
    Revoking a revoked token changes nothing and answers it as it is."""
    row = session.scalar(select(ApiToken).where(ApiToken.id == token_id).with_for_update())
    if row is None:
        raise NotFound("token")
    if row.revoked_at is None:
        now = datetime.now(UTC)
        session.execute(
            update(ApiToken)
            .where(ApiToken.id == token_id)
            .values(revoked_at=now, revoked_by=None if actor is None else actor.token_id)
        )
        record_event(
            session,
            "token_revoked",
            actor,
            player_id=row.player_id,
            subject={"token_id": row.id, "role": row.role, "name": row.name},
        )
        session.refresh(row)
    return info(row)


def issue_recorded(
    session: Session,
    role: Role,
    actor: Principal | None,
    *,
    name: str | None = None,
    player_id: int | None = None,
    ttl: timedelta | None = None,
) -> tuple[TokenInfo, str]:
    """Issue a token and record the event, with its issuer (None: the command line)."""
    row, token = issue(
        session,
        role,
        name=name,
        player_id=player_id,
        issued_by=None if actor is None else actor.token_id,
        ttl=ttl,
    )
    record_event(
        session,
        "token_issued",
        actor,
        player_id=player_id,
        subject={"token_id": row.id, "role": role.value, "name": name},
        details={"expires_at": None if row.expires_at is None else row.expires_at.isoformat()},
    )
    return info(row), token
