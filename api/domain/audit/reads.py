"""The hand rows an audit reads: plain column tuples (the driver's own, not ORM objects or
SQLAlchemy rows), a period's hands in keyset batches by id.

A hand is read with outer joins to its seed pair and its table, so that a hand whose seed
pair or table row was deleted is still audited (and named), never silently left out.
"""

from collections.abc import Iterator
from datetime import datetime
from typing import Any, NamedTuple, TypeVar

from sqlalchemy import (
    ColumnElement,
    Connection,
    Select,
    String,
    and_,
    cast,
    func,
    select,
    type_coerce,
)
from sqlalchemy.orm import Session
from sqlalchemy.types import NullType

from api.db.models import casino_tables_table, hands_table, seed_pairs_table
from api.db.snapshot import connection_of
from api.domain.hands.ledger import RawTime, driver_rows

BATCH = 2000

_Query = TypeVar("_Query", bound=Select[*tuple[Any, ...]])  # any SELECT over hands


class HandRow(NamedTuple):
    """The columns a replay reads, in `HAND_COLUMNS` order."""

    id: int
    player_id: int
    table_id: int
    seed_pair_id: int
    nonce: int
    currency: str
    rules: str  # the recorded rules, as JSON text (parsed once per distinct text)
    status: str
    bet: int
    tie_bet: int
    raise_amount: int
    player_card: str
    dealer_card: str
    war_burned: str | None  # JSON text
    war_player_card: str | None
    war_dealer_card: str | None
    decision: str | None
    decided_by: str | None
    outcome: str | None
    total_staked: int
    total_returned: int | None
    net: int | None
    balance_before: int
    balance_after: int | None
    settled_at: RawTime | None  # as the driver returns it: `aware_time` converts it
    created_at: RawTime
    server_seed: str | None  # None: the seed pair row is gone (outer join)
    server_seed_hash: str | None
    client_seed: str | None
    table_rules: str | None  # the table's rules as JSON text; None: the table row is gone
    engine_version: str | None  # None: dealt before the version was recorded
    rules_hash: str | None
    placed_by_token: int | None  # None: recorded before actors were
    decided_by_token: int | None


_h = hands_table.c
HAND_COLUMNS = (
    _h.id,
    _h.player_id,
    _h.table_id,
    _h.seed_pair_id,
    _h.nonce,
    _h.currency,
    cast(_h.rules, String).label("rules"),
    _h.status,
    _h.bet,
    _h.tie_bet,
    _h.raise_amount,
    _h.player_card,
    _h.dealer_card,
    cast(_h.war_burned, String).label("war_burned"),
    _h.war_player_card,
    _h.war_dealer_card,
    _h.decision,
    _h.decided_by,
    _h.outcome,
    _h.total_staked,
    _h.total_returned,
    _h.net,
    _h.balance_before,
    _h.balance_after,
    # Raw: converted only where compared (`aware_time`), not by per-row type processing.
    type_coerce(_h.settled_at, NullType()).label("settled_at"),
    type_coerce(_h.created_at, NullType()).label("created_at"),
    seed_pairs_table.c.server_seed,
    seed_pairs_table.c.server_seed_hash,
    seed_pairs_table.c.client_seed,
    cast(casino_tables_table.c.rules, String).label("table_rules"),
    _h.engine_version,
    _h.rules_hash,
    _h.placed_by_token,
    _h.decided_by_token,
)


def hand_query() -> Select[Any]:
    """Every column of `HandRow`, the seed pair and the table outer-joined."""
    return select(*HAND_COLUMNS).select_from(
        hands_table.outerjoin(seed_pairs_table, seed_pairs_table.c.id == _h.seed_pair_id).outerjoin(
            casino_tables_table, casino_tables_table.c.id == _h.table_id
        )
    )


def one_hand(connection: Connection, hand_id: int) -> HandRow | None:
    found = connection.execute(hand_query().where(_h.id == hand_id)).first()
    return None if found is None else HandRow._make(found)


def period(start: datetime | None, end: datetime | None) -> list[ColumnElement[bool]]:
    """The conditions selecting hands created in [start, end), either bound optional."""
    conditions = []
    if start is not None:
        conditions.append(_h.created_at >= start)
    if end is not None:
        conditions.append(_h.created_at < end)
    return conditions


def in_range(query: _Query, start: datetime | None, end: datetime | None) -> _Query:
    """The query restricted to hands created in [start, end), either bound optional."""
    return query.where(*period(start, end))


def hands_between(
    first_id: int, last_id: int, start: datetime | None, end: datetime | None
) -> ColumnElement[bool]:
    """The hands of [start, end) with ids from `first_id` to `last_id`: a batch's, as a
    condition its ledger reads join on."""
    return and_(_h.id >= first_id, _h.id <= last_id, *period(start, end))


def count_hands(
    session_or_connection: Session | Connection, start: datetime | None, end: datetime | None
) -> int:
    connection = connection_of(session_or_connection)
    query = in_range(select(func.count()).select_from(hands_table), start, end)
    return int(connection.execute(query).scalar_one())


def batches(
    connection: Connection,
    start: datetime | None,
    end: datetime | None,
    batch: int,
    after_id: int = 0,
    through_id: int | None = None,
) -> Iterator[list[HandRow]]:
    """Keyset batches by id, within (after_id, through_id]: each a short query, so nothing
    holds a cursor open, and an id range is a parallel worker's share of a period."""
    base = in_range(hand_query(), start, end).order_by(_h.id).limit(batch)
    if through_id is not None:
        base = base.where(_h.id <= through_id)
    make = HandRow._make
    while True:
        rows = list(map(make, driver_rows(connection, base.where(_h.id > after_id))))
        if not rows:
            return
        yield rows
        after_id = rows[-1].id
        if len(rows) < batch:
            return
