"""Reading the settled hands of a UTC range, each with what the ledger says it staked and
returned: the report's only query, streamed in keyset batches with one ledger read a batch."""

from collections.abc import Iterable, Iterator, Sequence
from datetime import datetime
from typing import Any, Final
from zoneinfo import ZoneInfo

from sqlalchemy import Connection, Row, String, cast, select, tuple_

from api.db.models import hands_table
from api.domain.hands.ledger import AccountCodes, LedgerTxn, fetch_hand_ledger, reference
from api.domain.reports.aggregate import SettledHand
from api.domain.reports.gaming_day import gaming_day
from casino.hand import HandStatus
from ledger import chart

BATCH: Final = 2000

_h = hands_table.c
_COLUMNS = (
    _h.id,
    _h.table_id,
    _h.player_id,
    _h.currency,
    cast(_h.rules, String).label("rules"),
    _h.bet,
    _h.tie_bet,
    _h.raise_amount,
    _h.total_staked,
    _h.total_returned,
    _h.net,
    _h.outcome,
    _h.settled_at,
)


def ledger_money(txns: Iterable[LedgerTxn], wallet: str) -> tuple[int | None, int | None]:
    """(staked, returned) per the ledger: stake and raise transfers, and the settlement's
    credit to the wallet (0 on a loss, where nothing returns); None where no such
    transaction exists."""
    staked: int | None = None
    returned: int | None = None
    for txn in txns:
        if txn.kind in ("stake", "raise"):
            staked = (staked or 0) + txn.moved
        elif txn.kind == "settlement":
            returned = (returned or 0) - txn.amounts.get(wallet, 0)
    return staked, returned


def settled_hands(
    connection: Connection, start: datetime, end: datetime, zone: ZoneInfo, start_hour: int
) -> Iterator[SettledHand]:
    """Hands settled in [start, end), streamed in keyset batches, ledger fetched per batch."""
    codes = AccountCodes(connection)
    for rows in _batches(connection, start, end):
        ledger = fetch_hand_ledger(connection, [reference(row[0]) for row in rows], codes)
        for (
            hand_id,
            table_id,
            player_id,
            currency,
            rules,
            bet,
            tie_bet,
            raise_amount,
            total_staked,
            total_returned,
            net,
            outcome,
            settled_at,
        ) in rows:
            staked, returned = ledger_money(
                ledger.get(reference(hand_id), ()), chart.wallet(str(player_id), currency).code
            )
            yield SettledHand(
                hand_id=hand_id,
                day=gaming_day(settled_at, zone, start_hour),
                table_id=table_id,
                player_id=player_id,
                currency=currency,
                rules=rules,
                bet=bet,
                tie_bet=tie_bet,
                raise_amount=raise_amount,
                total_staked=total_staked,
                total_returned=total_returned if total_returned is not None else 0,
                net=net if net is not None else 0,
                outcome=outcome or "",
                ledger_staked=staked,
                ledger_returned=returned,
            )


def _batches(
    connection: Connection, start: datetime, end: datetime
) -> Iterator[Sequence[Row[*tuple[Any, ...]]]]:
    """The hands settled in [start, end) in (settled_at, id) order, `BATCH` rows at a time:
    keyset pagination, served by ix_hands_status_settled_at_id."""
    base = (
        select(*_COLUMNS)
        .where(
            _h.status == HandStatus.SETTLED.value,
            _h.settled_at >= start,
            _h.settled_at < end,
        )
        .order_by(_h.settled_at, _h.id)
        .limit(BATCH)
    )
    query = base
    while rows := connection.execute(query).all():
        yield rows
        if len(rows) < BATCH:
            return
        last = rows[-1]
        query = base.where(tuple_(_h.settled_at, _h.id) > tuple_(last.settled_at, last.id))
