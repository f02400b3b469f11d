"""The ledger seen hand by hand: batched reads of the transactions referencing `hand:<id>`.

The audit and the payout report both need, for thousands of hands at a time, the stake,
raise and settlement each hand posted. One query per batch of references (not one per hand)
keeps that cheap; entries are netted per account code, which is all a check needs.
"""

from collections import defaultdict
from collections.abc import Collection, Iterable
from dataclasses import dataclass, field

from sqlalchemy import Connection, select

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


def fetch_hand_ledger(
    connection: Connection, references: Collection[str], codes: AccountCodes
) -> dict[str, list[LedgerTxn]]:
    """Every transaction referencing one of `references`, grouped by reference, seq order."""
    if not references:
        return {}
    rows = connection.execute(
        select(
            transactions.c.id,
            transactions.c.seq,
            transactions.c.kind,
            transactions.c.reference,
            entries.c.account_id,
            entries.c.amount,
        )
        .select_from(transactions.outerjoin(entries, entries.c.transaction_id == transactions.c.id))
        .where(transactions.c.reference.in_(list(references)))
    ).all()
    by_id: dict[int, LedgerTxn] = {}
    by_reference: dict[str, list[LedgerTxn]] = defaultdict(list)
    known = codes.known
    for txn_id, seq, kind, ref, account_id, amount in rows:
        txn = by_id.get(txn_id)
        if txn is None:
            txn = by_id[txn_id] = LedgerTxn(txn_id, seq, kind)
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
    transactions left out: deposits or withdrawals made while a tie awaited a decision."""

    key: int
    wallet: str
    after_seq: int
    before_seq: int
    own_reference: str


def other_wallet_movements(
    connection: Connection, windows: Iterable[WalletWindow], codes: AccountCodes
) -> dict[int, int]:
    """How much each window's wallet balance moved through other transactions (one query)."""
    wanted = [w for w in windows if w.before_seq - w.after_seq > 1]
    result: dict[int, int] = {}
    if not wanted:
        return result
    account_ids = {code_id for w in wanted if (code_id := codes.id(w.wallet)) is not None}
    if not account_ids:
        return result
    low = min(w.after_seq for w in wanted)
    high = max(w.before_seq for w in wanted)
    # Range first: the transactions between the batch's windows (unique index on seq), then
    # their entries (index on transaction_id). Filtering on the wallets first would read
    # every entry a busy wallet ever had, once per batch: an audit slowing as the ledger grows.
    in_range = {
        int(txn_id): (int(seq), ref)
        for txn_id, seq, ref in connection.execute(
            select(transactions.c.id, transactions.c.seq, transactions.c.reference).where(
                transactions.c.seq > low, transactions.c.seq < high
            )
        )
    }
    if not in_range:
        return result
    rows = (
        (*in_range[int(txn_id)], account_id, amount)
        for txn_id, account_id, amount in connection.execute(
            select(entries.c.transaction_id, entries.c.account_id, entries.c.amount).where(
                entries.c.transaction_id.between(min(in_range), max(in_range)),
                entries.c.account_id.in_(sorted(account_ids)),
            )
        )
        if int(txn_id) in in_range
    )
    by_wallet: dict[str, list[tuple[int, str | None, int]]] = defaultdict(list)
    for seq, ref, account_id, amount in rows:
        by_wallet[codes.code(account_id)].append((int(seq), ref, int(amount)))
    for window in wanted:
        # A wallet is credit-normal: a credit (negative entry) raises its balance.
        result[window.key] = -sum(
            amount
            for seq, ref, amount in by_wallet.get(window.wallet, ())
            if window.after_seq < seq < window.before_seq and ref != window.own_reference
        )
    return result
