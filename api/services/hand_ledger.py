"""The ledger seen hand by hand: batched reads of the transactions referencing `hand:<id>`.

The audit and the payout report both need, for thousands of hands at a time, the stake,
raise and settlement each hand posted. One query per batch of references (not one per hand)
keeps that cheap; entries are netted per account code, which is all a check needs.
"""

import json
from collections import defaultdict
from collections.abc import Collection, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import lru_cache
from typing import Any

from sqlalchemy import Connection, String, bindparam, cast, func, or_, select, type_coerce
from sqlalchemy.types import NullType

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
    """Account id -> code, loaded once (accounts are few: two per player and currency)."""

    def __init__(self, connection: Connection) -> None:
        self._connection = connection
        self._codes: dict[int, str] = {}
        self._ids: dict[str, int] = {}
        self.reload()

    @property
    def known(self) -> dict[int, str]:
        """The codes loaded so far (the hot loop reads this dict directly)."""
        return self._codes

    def reload(self) -> None:
        for account_id, code in self._connection.execute(select(accounts.c.id, accounts.c.code)):
            self._codes[int(account_id)] = code
            self._ids[code] = int(account_id)

    def code(self, account_id: int) -> str:
        found = self._codes.get(account_id)
        if found is None:  # opened since we loaded (a live database)
            self.reload()
            found = self._codes.get(account_id, f"<unknown account {account_id}>")
        return found

    def id(self, code: str) -> int | None:
        return self._ids.get(code)


_TXN_COLUMNS = (
    transactions.c.id,
    transactions.c.seq,
    transactions.c.kind,
    transactions.c.reference,
    entries.c.account_id,
    entries.c.amount,
)
# Raw (no per-row type processing: these repeat on every entry row of a transaction, and
# are converted once per transaction instead).
_DETAIL_COLUMNS = (
    cast(transactions.c["metadata"], String).label("metadata"),
    type_coerce(transactions.c.posted_at, NullType()).label("posted_at"),
)


def _posted_at(raw: Any) -> datetime | None:
    """A raw `posted_at`: an aware datetime (PostgreSQL) or naive-UTC ISO text (SQLite)."""
    if raw is None:
        return None
    moment = raw if isinstance(raw, datetime) else datetime.fromisoformat(str(raw))
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


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
    columns = (*_TXN_COLUMNS, *_DETAIL_COLUMNS) if details else _TXN_COLUMNS
    # One batch's rows (a few per hand) fetched at once: far cheaper than row by row, and
    # still bounded by the batch size.
    rows = connection.execute(
        select(*columns)
        .select_from(transactions.outerjoin(entries, entries.c.transaction_id == transactions.c.id))
        .where(transactions.c.reference.in_(list(references)))
    ).all()
    by_id: dict[int, LedgerTxn] = {}
    by_reference: dict[str, list[LedgerTxn]] = defaultdict(list)
    known = codes.known
    for row in rows:
        txn_id, seq, kind, ref, account_id, amount = row[:6]
        txn = by_id.get(txn_id)
        if txn is None:
            txn = by_id[txn_id] = LedgerTxn(txn_id, seq, kind)
            if details:
                txn.meta = _metadata(row[6])
                txn.posted_at = _posted_at(row[7])
            by_reference[ref].append(txn)
        if account_id is not None:
            code = known.get(account_id) or codes.code(account_id)
            amounts = txn.amounts
            amounts[code] = amounts.get(code, 0) + amount
    for txns in by_reference.values():
        txns.sort(key=lambda t: t.seq)
        for txn in txns:
            txn.amounts = {code: amount for code, amount in txn.amounts.items() if amount}
    return by_reference


@dataclass(frozen=True, slots=True)
class WalletWindow:
    """A wallet between a hand's stake and its settlement (exclusive), the hand's own
    transactions left out: deposits or withdrawals made while a tie awaited a decision.

    Bounded by transaction ids: they are assigned while the chain head is locked (`post`
    inserts the transaction after locking the head), so id order is posting order.
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
        if wallet_id is None:
            codes.reload()
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
