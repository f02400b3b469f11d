"""The ledger seen hand by hand: batched reads of the transactions referencing `hand:<id>`.

The audit and the payout report both need, for thousands of hands at a time, the stake,
raise and settlement each hand posted. Two queries per batch (transactions, then their
entries), not one per hand, keep that cheap; entries are netted per account code, which is
all a check needs.
"""

import json
from collections import defaultdict
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import lru_cache
from typing import Any

from sqlalchemy import (
    ColumnElement,
    Connection,
    FromClause,
    Select,
    String,
    bindparam,
    cast,
    func,
    literal,
    or_,
    select,
    type_coerce,
)
from sqlalchemy.types import NullType

from api.db.models import hands_table
from ledger.schema import accounts, entries, transactions

HAND_KINDS = ("stake", "raise", "settlement")
REFERENCE_PREFIX = "hand:"


def reference(hand_id: int) -> str:
    return f"{REFERENCE_PREFIX}{hand_id}"


@dataclass(slots=True)
class LedgerTxn:
    """One transaction of a hand: its id, chain position, kind, and net amount per account."""

    id: int
    seq: int
    kind: str
    chain: int
    amounts: dict[str, int] = field(default_factory=dict)
    # Only with `fetch_hand_ledger(..., details=True)` (the audit): both are hashed into the
    # chain, so they witness the hand record's player, table, times and decision.
    meta: dict[str, Any] | None = None
    posted_at: datetime | None = None

    @property
    def moved(self) -> int:
        """The amount transferred: the sum of its debits."""
        return sum(amount for amount in self.amounts.values() if amount > 0)


class AccountCodes:
    """Account id <-> code, read as needed and kept (an account's code never changes).

    Only the accounts a batch of hands touches are read, in one query per batch: an audit's
    parallel workers each start afresh per chunk, and reading every account of a casino
    with many players per chunk would cost more than the chunk's hands.
    """

    def __init__(self, connection: Connection) -> None:
        self._connection = connection
        self._codes: dict[int, str] = {}
        self._ids: dict[str, int] = {}

    @property
    def known(self) -> dict[int, str]:
        """The codes read so far (the hot loop reads this dict directly)."""
        return self._codes

    def load(self, account_ids: Iterable[int]) -> None:
        """Read the codes of those of `account_ids` not known yet, in one query."""
        missing = [i for i in set(account_ids) if i not in self._codes]
        if missing:
            self._add(select(accounts.c.id, accounts.c.code).where(accounts.c.id.in_(missing)))

    def code(self, account_id: int) -> str:
        found = self._codes.get(account_id)
        if found is None:
            self.load((account_id,))
            found = self._codes.get(account_id, f"<unknown account {account_id}>")
        return found

    def id(self, code: str) -> int | None:
        found = self._ids.get(code)
        if found is None:
            self._add(select(accounts.c.id, accounts.c.code).where(accounts.c.code == code))
            found = self._ids.get(code)
        return found

    def _add(self, query: Select[int, str]) -> None:
        for account_id, code in self._connection.execute(query):
            self._codes[int(account_id)] = code
            self._ids[code] = int(account_id)


_TXN_COLUMNS = (
    transactions.c.id,
    transactions.c.seq,
    transactions.c.kind,
    transactions.c.chain,
    transactions.c.reference,
)
# Raw (no per-row type processing): `aware_time` converts either driver's value at once.
_DETAIL_COLUMNS = (
    cast(transactions.c["metadata"], String).label("metadata"),
    type_coerce(transactions.c.posted_at, NullType()).label("posted_at"),
)
_ENTRY_COLUMNS = (entries.c.transaction_id, entries.c.account_id, entries.c.amount)


RawTime = datetime | str  # a timestamp as the driver returns it, without type processing


def aware_time(raw: RawTime) -> datetime:
    """A raw timestamp as an aware datetime: PostgreSQL returns aware datetimes (in the
    session's zone: subtraction does not care, `utc_iso` shows them in UTC), SQLite naive-UTC
    ISO text. Converted here, in one call, rather than by SQLAlchemy's per-row type
    processing, which would convert every row's time on its own."""
    if isinstance(raw, str):
        return datetime.fromisoformat(raw + "+00:00")
    return raw if raw.tzinfo is not None else raw.replace(tzinfo=UTC)


def utc_iso(moment: datetime) -> str:
    """An aware time as UTC ISO text, as a difference shows it."""
    return moment.astimezone(UTC).isoformat()


@lru_cache(maxsize=4096)
def _metadata(text: str | None) -> dict[str, Any]:
    """The stored metadata; {} when it is not a JSON object (a tampered row shows as such).

    Cached: the same few texts ({player, table}) repeat on every hand. Read-only.
    """
    if text is None:
        return {}
    try:
        loaded = json.loads(text)
    except ValueError:
        return {}
    return loaded if isinstance(loaded, dict) else {}


def fetch_hand_ledger(
    connection: Connection,
    references: Collection[str],
    codes: AccountCodes,
    *,
    details: bool = False,
) -> dict[str, list[LedgerTxn]]:
    """Every transaction referencing one of `references`, grouped by reference, seq order;
    with `details`, each transaction's metadata and posting time too."""
    if not references:
        return {}
    wanted = transactions.c.reference.in_(list(references))
    return _fetch(connection, transactions, wanted, codes, details)


# 'hand:<id>' computed in SQL, so a batch of hands is joined to its ledger transactions
# through the reference index without sending the references themselves.
HAND_REFERENCE = literal(REFERENCE_PREFIX, String) + cast(hands_table.c.id, String)
"""A hand row's `reference()`, as SQL: what its ledger transactions must carry."""
_HANDS_TO_TRANSACTIONS = hands_table.join(transactions, transactions.c.reference == HAND_REFERENCE)


def fetch_ledger_of_hands(
    connection: Connection,
    hands_where: ColumnElement[bool],
    codes: AccountCodes,
    *,
    details: bool = False,
) -> dict[str, list[LedgerTxn]]:
    """`fetch_hand_ledger` for the hands `hands_where` selects (a condition on `hands`, such
    as a batch's id range): the same transactions, found by a join in SQL rather than by a
    list of a batch's references bound, and rendered, on every query."""
    return _fetch(connection, _HANDS_TO_TRANSACTIONS, hands_where, codes, details)


def _fetch(
    connection: Connection,
    source: FromClause,
    wanted: ColumnElement[bool],
    codes: AccountCodes,
    details: bool,
) -> dict[str, list[LedgerTxn]]:
    """Two queries, transactions then their entries, rather than one join: a transaction's
    columns (its metadata text and time above all) are then read and converted once, not
    once per entry, and the entry rows are three integers. Each query returns one batch's
    rows (a few per hand) at once: far cheaper than row by row, and bounded by the batch.
    """
    columns = (*_TXN_COLUMNS, *_DETAIL_COLUMNS) if details else _TXN_COLUMNS
    query = select(*columns).select_from(source).where(wanted).order_by(transactions.c.seq)
    by_id: dict[int, LedgerTxn] = {}
    by_reference: dict[str, list[LedgerTxn]] = defaultdict(list)
    for row in driver_rows(connection, query):
        txn = by_id[row[0]] = LedgerTxn(row[0], row[1], row[2], row[3])
        if details:
            txn.meta = _metadata(row[5])
            txn.posted_at = None if row[6] is None else aware_time(row[6])
        by_reference[row[4]].append(txn)
    entry_rows = driver_rows(
        connection,
        select(*_ENTRY_COLUMNS)
        .select_from(source.join(entries, entries.c.transaction_id == transactions.c.id))
        .where(wanted),
    )
    _net_entries(entry_rows, by_id, codes)
    return by_reference


# Execution options under which SQLAlchemy reads ahead of the caller (a buffered result holds
# rows the driver's cursor no longer returns).
_STREAMING_OPTIONS = ("stream_results", "yield_per")


def driver_rows(connection: Connection, query: Select[Any]) -> list[tuple[Any, ...]]:
    """The query's rows exactly as the driver returns them: plain tuples.

    For the batch reads of the audit and the payout report, which read several ledger rows
    per hand: SQLAlchemy's `Row` objects would cost as much again as the database's own work
    on the entries. Only for queries whose columns need no
    result processing: integers, text, and raw times (`RawTime`, converted by `aware_time`).
    A streaming connection is read through SQLAlchemy instead: its result has already taken
    the first row from the cursor.
    """
    options = {**connection.get_execution_options(), **query.get_execution_options()}
    if any(options.get(name) for name in _STREAMING_OPTIONS):
        return [tuple(row) for row in connection.execute(query)]
    result = connection.execute(query)
    try:
        return list(result.cursor.fetchall())
    finally:
        result.close()


def _net_entries(
    rows: Sequence[tuple[int, int, int]], by_id: dict[int, LedgerTxn], codes: AccountCodes
) -> None:
    """Each transaction's entries (`rows`: transaction id, account id, amount) netted per
    account code, zero nets left out."""
    codes.load(row[1] for row in rows)
    known = codes.known
    for txn_id, account_id, amount in rows:
        txn = by_id.get(txn_id)
        if txn is None:  # posted between the two queries (outside a snapshot): not listed
            continue
        amounts = txn.amounts
        code = known.get(account_id) or codes.code(account_id)
        amounts[code] = amounts.get(code, 0) + amount
    for txn in by_id.values():
        if 0 in txn.amounts.values():
            txn.amounts = {code: amount for code, amount in txn.amounts.items() if amount}


@dataclass(frozen=True, slots=True)
class WalletWindow:
    """A wallet between a hand's stake and its settlement (exclusive), the hand's own
    transactions left out: deposits or withdrawals made while a tie awaited a decision.

    Bounded by transaction ids: every posting that moves a player's money takes the
    player's lock first (`api.domain.players.turn.lock_player`) and commits before the next one can
    start, so the ids of a wallet's transactions are in posting order, whatever chains
    they are on.
    """

    key: int
    wallet: str
    after_txn_id: int
    before_txn_id: int
    own_reference: str


# One window's other movements on one wallet: the (account_id, transaction_id) index bounds
# it to that wallet's own activity between the stake and the settlement, however much else
# the casino posted meanwhile (a tie decided a day later reads one wallet's day, not the
# ledger's).
_WINDOW_MOVEMENTS = (
    select(func.coalesce(func.sum(entries.c.amount), 0))
    .select_from(entries.join(transactions, transactions.c.id == entries.c.transaction_id))
    .where(
        entries.c.account_id == bindparam("wallet_id"),
        entries.c.transaction_id > bindparam("after_txn_id"),
        entries.c.transaction_id < bindparam("before_txn_id"),
        or_(
            transactions.c.reference.is_(None),
            transactions.c.reference != bindparam("own_reference"),
        ),
    )
)


def other_wallet_movements(
    connection: Connection, windows: Iterable[WalletWindow], codes: AccountCodes
) -> dict[int, int]:
    """How much each window's wallet balance moved through other transactions (one small
    indexed query per window: constant memory, whatever the window spans)."""
    result: dict[int, int] = {}
    for window in windows:
        wallet_id = codes.id(window.wallet)
        if wallet_id is None or window.before_txn_id - window.after_txn_id <= 1:
            continue
        debits = connection.execute(
            _WINDOW_MOVEMENTS,
            {
                "wallet_id": wallet_id,
                "after_txn_id": window.after_txn_id,
                "before_txn_id": window.before_txn_id,
                "own_reference": window.own_reference,
            },
        ).scalar_one()
        # A wallet is credit-normal: a credit (negative entry) raises its balance.
        result[window.key] = -int(debits)
    return result
