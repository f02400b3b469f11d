"""The significant-events log: who did what to whom, append-only and hash-chained.

Each event is a link: its hash covers its content and the previous event's hash, and
`events_head` holds the newest link, locked by every append so that events are numbered
without gaps even under concurrent writers. The database refuses updates and deletes; the
chain makes any edit made behind its back (triggers dropped) visible to `verify_events`,
which names each altered or missing event.
"""

import hashlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal, get_args

from sqlalchemy import Select, select, update
from sqlalchemy.orm import Session

from api.db.models import Event, EventsHead
from api.domain.tokens.service import Principal
from api.pagination import Page, decode_cursor, next_cursor
from ledger.chain import canonical_json, iso_utc

EventType = Literal[
    "player_created",
    "token_issued",
    "token_revoked",
    "authentication_throttled",
    "table_created",
    "table_opened",
    "table_closed",
    "seeds_rotated",
    "hand_resolved_by_timeout",
    "audit_run",
    "limit_changed",
    "exclusion_set",
]
EVENT_TYPES: tuple[EventType, ...] = get_args(EventType)
GENESIS_HASH = "0" * 64
_HEAD = select(EventsHead).where(EventsHead.id == 1)


@dataclass(frozen=True, slots=True)
class Actor:
    token_id: int
    role: str
    name: str | None


@dataclass(frozen=True, slots=True)
class EventView:
    id: int
    seq: int
    at: datetime
    type: str
    actor: Actor | None
    player_id: int | None
    subject: dict[str, Any]
    details: dict[str, Any]
    hash: str


@dataclass(frozen=True, slots=True)
class EventFilters:
    type: str | None = None
    player_id: int | None = None
    token_id: int | None = None
    since: datetime | None = None
    until: datetime | None = None


def event_hash(
    *,
    seq: int,
    at: datetime,
    type: str,
    actor: Actor | None,
    player_id: int | None,
    subject: Mapping[str, Any],
    details: Mapping[str, Any],
    prev_hash: str,
) -> str:
    document = {
        "seq": seq,
        "at": iso_utc(at),
        "type": type,
        "actor": None
        if actor is None
        else {"token_id": actor.token_id, "role": actor.role, "name": actor.name},
        "player_id": player_id,
        "subject": dict(subject),
        "details": dict(details),
        "prev_hash": prev_hash,
    }
    return hashlib.sha256(canonical_json(document).encode()).hexdigest()


def record_event(
    session: Session,
    type: EventType,
    actor: Principal | None,
    *,
    player_id: int | None = None,
    subject: Mapping[str, Any] | None = None,
    details: Mapping[str, Any] | None = None,
) -> int:
    """Append one event in the caller's transaction; returns its sequence number."""
    head = session.execute(_HEAD.with_for_update()).scalar_one()
    by = None if actor is None else Actor(actor.token_id, actor.role.value, actor.name)
    at = datetime.now(UTC)
    seq = head.seq + 1
    subject, details = dict(subject or {}), dict(details or {})
    digest = event_hash(
        seq=seq,
        at=at,
        type=type,
        actor=by,
        player_id=player_id,
        subject=subject,
        details=details,
        prev_hash=head.hash,
    )
    session.add(
        Event(
            seq=seq,
            at=at,
            type=type,
            actor_token_id=None if by is None else by.token_id,
            actor_role=None if by is None else by.role,
            actor_name=None if by is None else by.name,
            player_id=player_id,
            subject=subject,
            details=details,
            prev_hash=head.hash,
            hash=digest,
        )
    )
    session.execute(update(EventsHead).where(EventsHead.id == 1).values(seq=seq, hash=digest))
    session.flush()
    return seq


def list_events(
    session: Session, filters: EventFilters, cursor: str | None, limit: int
) -> Page[EventView]:
    """Oldest first, filtered, cursor-paginated."""
    query = _filtered(select(Event), filters).order_by(Event.id).limit(limit)
    after = decode_cursor(cursor)
    if after is not None:
        query = query.where(Event.id > after)
    rows: list[Event] = list(session.scalars(query))
    return Page(tuple(map(_view, rows)), next_cursor([row.id for row in rows], limit))


def events_between(session: Session, filters: EventFilters) -> Iterator[EventView]:
    """Every event the filters select, oldest first, read in batches (for exports)."""
    after = 0
    while True:
        rows: list[Event] = list(
            session.scalars(
                _filtered(select(Event), filters)
                .where(Event.id > after)
                .order_by(Event.id)
                .limit(1000)
            )
        )
        if not rows:
            return
        yield from map(_view, rows)
        after = rows[-1].id


def _filtered(query: Select[Any], filters: EventFilters) -> Select[Any]:
    if filters.type is not None:
        query = query.where(Event.type == filters.type)
    if filters.player_id is not None:
        query = query.where(Event.player_id == filters.player_id)
    if filters.token_id is not None:
        query = query.where(Event.actor_token_id == filters.token_id)
    if filters.since is not None:
        query = query.where(Event.at >= filters.since)
    if filters.until is not None:
        query = query.where(Event.at < filters.until)
    return query


def _view(row: Event) -> EventView:
    return EventView(
        id=row.id,
        seq=row.seq,
        at=row.at,
        type=row.type,
        actor=_actor(row),
        player_id=row.player_id,
        subject=dict(row.subject),
        details=dict(row.details),
        hash=row.hash,
    )


def _actor(row: Event) -> Actor | None:
    if row.actor_token_id is None or row.actor_role is None:
        return None
    return Actor(row.actor_token_id, row.actor_role, row.actor_name)


@dataclass(frozen=True, slots=True)
class EventProblem:
    seq: int
    problem: str


@dataclass(frozen=True, slots=True)
class EventsCheck:
    events: int
    problems: tuple[EventProblem, ...]

    @property
    def ok(self) -> bool:
        return not self.problems


def verify_events(session: Session) -> EventsCheck:
    """Walk the chain: each event's hash recomputed from its content, each link to the one
    before, no number missing, and the head at the last event."""
    problems: list[EventProblem] = []
    previous_seq, previous_hash, count = 0, GENESIS_HASH, 0
    for row in _all_events(session):
        count += 1
        if row.seq != previous_seq + 1:
            problems.append(
                EventProblem(
                    previous_seq + 1,
                    f"missing: events {previous_seq + 1} to {row.seq - 1} were removed",
                )
            )
        if row.prev_hash != previous_hash:
            problems.append(EventProblem(row.seq, "does not link to the event before it"))
        recomputed = event_hash(
            seq=row.seq,
            at=row.at,
            type=row.type,
            actor=_actor(row),
            player_id=row.player_id,
            subject=row.subject,
            details=row.details,
            prev_hash=row.prev_hash,
        )
        if recomputed != row.hash:
            problems.append(EventProblem(row.seq, "altered: its content does not hash to it"))
        previous_seq, previous_hash = row.seq, row.hash
    head = session.execute(_HEAD).scalar_one()
    if (head.seq, head.hash) != (previous_seq, previous_hash):
        problems.append(
            EventProblem(
                head.seq,
                f"the head is at event {head.seq}, the log ends at "
                f"{previous_seq}: events were removed from the end",
            )
        )
    return EventsCheck(count, tuple(problems))


def _all_events(session: Session) -> Iterator[Event]:
    after = -1
    while True:
        rows = list(
            session.scalars(select(Event).where(Event.seq > after).order_by(Event.seq).limit(1000))
        )
        if not rows:
            return
        yield from rows
        after = rows[-1].seq
