"""Streaming integrity check of the whole ledger, in constant memory.

Every check is something the database cannot enforce by itself once its triggers have
been bypassed: the hash chain (edits, deletions, insertions), the trial balance (entries
summing to zero per currency in every transaction) and the stored running balances.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterator
from typing import Any

from sqlalchemy import Connection, func, select
from sqlalchemy.orm import Session

from ledger.chain import transaction_hash
from ledger.chains import follows, next_seq
from ledger.report import (
    ChainHead,
    LedgerProblem,
    LedgerReport,
    ProblemCode,
)
from ledger.schema import GENESIS_HASH, accounts, chain_head, entries, transactions

BATCH = 1000


def verify_ledger(
    session_or_connection: Session | Connection,
    *,
    on_progress: Callable[[int], None] | None = None,
) -> LedgerReport:
    """Check every hash chain, the trial balance and every stored balance.

    Rows are streamed (server-side cursor on PostgreSQL), chain after chain, so memory does
    not grow with the ledger. `on_progress` is called with the number of transactions
    checked so far.
    """
    connection = (
        session_or_connection.connection()
        if isinstance(session_or_connection, Session)
        else session_or_connection
    )
    problems: list[LedgerProblem] = []
    trial_balance: dict[str, int] = defaultdict(int)
    heads = tuple(
        ChainHead(int(row.id), int(row.seq), row.hash)
        for row in connection.execute(
            select(chain_head.c.id, chain_head.c.seq, chain_head.c.hash).order_by(chain_head.c.id)
        )
    )
    walk = _ChainWalk({head.chain: head for head in heads}, problems)
    if not heads:
        problems.append(
            LedgerProblem("ledger_chain_head", None, ProblemCode.HEAD_MISSING, "no chain head")
        )
    checked, entries_checked = _check_transactions(
        connection, walk, trial_balance, problems, on_progress
    )
    walk.finish()
    _check_orphan_entries(connection, problems)
    accounts_checked = _check_accounts(connection, problems)
    return LedgerReport(
        problems=tuple(problems),
        transactions_checked=checked,
        entries_checked=entries_checked,
        accounts_checked=accounts_checked,
        trial_balance=dict(trial_balance),
        heads=heads,
        chain_ok=walk.ok,
    )


def _check_transactions(
    connection: Connection,
    walk: _ChainWalk,
    trial_balance: dict[str, int],
    problems: list[LedgerProblem],
    on_progress: Callable[[int], None] | None,
) -> tuple[int, int]:
    """Walk every transaction along its chain, balance its entries and add them to the
    trial balance; returns how many transactions and entries were checked."""
    checked = 0
    entries_checked = 0
    for txn, legs in _stream_transactions(connection):
        checked += 1
        entries_checked += len(legs)
        walk.link(txn, legs)
        where = {"table": "ledger_transactions", "row_id": txn["id"], "seq": int(txn["seq"])}
        if not legs:
            problems.append(
                LedgerProblem(
                    code=ProblemCode.NO_ENTRIES, detail="transaction has no entries", **where
                )
            )
        sums: dict[str, int] = defaultdict(int)
        for _, currency, amount, account_currency in legs:
            sums[currency] += amount
            trial_balance[currency] += amount
            if currency != account_currency:
                problems.append(
                    LedgerProblem(
                        code=ProblemCode.CURRENCY_MISMATCH,
                        detail=f"an entry in {currency} posts to an account in {account_currency}",
                        **where,
                    )
                )
        unbalanced = {currency: total for currency, total in sums.items() if total}
        if unbalanced:
            problems.append(
                LedgerProblem(
                    code=ProblemCode.UNBALANCED,
                    detail=f"entries do not sum to zero: {unbalanced}",
                    **where,
                )
            )
        if on_progress is not None and checked % BATCH == 0:
            on_progress(checked)
    if on_progress is not None:
        on_progress(checked)
    return checked, entries_checked


def _check_orphan_entries(connection: Connection, problems: list[LedgerProblem]) -> None:
    orphans = connection.execute(
        select(func.count())
        .select_from(entries.outerjoin(transactions, transactions.c.id == entries.c.transaction_id))
        .where(transactions.c.id.is_(None))
    ).scalar_one()
    if orphans:
        problems.append(
            LedgerProblem(
                "ledger_entries",
                None,
                ProblemCode.ORPHAN_ENTRIES,
                f"{orphans} entries belong to no transaction",
            )
        )


def _check_accounts(connection: Connection, problems: list[LedgerProblem]) -> int:
    """Every stored balance against the sum of its entries, and against its minimum;
    returns how many accounts were checked."""
    accounts_checked = 0
    totals = (
        select(entries.c.account_id, func.sum(entries.c.amount).label("total"))
        .group_by(entries.c.account_id)
        .subquery()
    )
    account_rows = connection.execute(
        select(
            accounts.c.id,
            accounts.c.code,
            accounts.c.side,
            accounts.c.balance,
            accounts.c.min_balance,
            func.coalesce(totals.c.total, 0).label("total"),
        )
        .select_from(accounts.outerjoin(totals, totals.c.account_id == accounts.c.id))
        .order_by(accounts.c.id)
        .execution_options(yield_per=BATCH)
    )
    for row in account_rows:
        accounts_checked += 1
        total = int(row.total)
        expected = total if row.side == "debit" else -total
        if int(row.balance) != expected:
            problems.append(
                LedgerProblem(
                    "ledger_accounts",
                    row.id,
                    ProblemCode.BALANCE_MISMATCH,
                    f"{row.code}: stored balance {row.balance} but its entries sum to {expected}",
                )
            )
        if row.min_balance is not None and int(row.balance) < int(row.min_balance):
            problems.append(
                LedgerProblem(
                    "ledger_accounts",
                    row.id,
                    ProblemCode.LIMIT_BREACHED,
                    f"{row.code}: balance {row.balance} is below its minimum {row.min_balance}",
                )
            )
    return accounts_checked


_Leg = tuple[str, str, int, str]


def _stream_transactions(
    connection: Connection,
) -> Iterator[tuple[dict[str, Any], list[_Leg]]]:
    """Transactions chain by chain, each in seq order, with their entries, from one
    streamed join."""
    statement = (
        select(
            transactions.c.id,
            transactions.c.chain,
            transactions.c.seq,
            transactions.c.kind,
            transactions.c.reference,
            transactions.c.idempotency_key,
            transactions.c.metadata,
            transactions.c.posted_at,
            transactions.c.prev_hash,
            transactions.c.hash,
            entries.c.currency.label("entry_currency"),
            entries.c.amount,
            accounts.c.code,
            accounts.c.currency.label("account_currency"),
        )
        .select_from(
            transactions.outerjoin(
                entries, entries.c.transaction_id == transactions.c.id
            ).outerjoin(accounts, accounts.c.id == entries.c.account_id)
        )
        .order_by(transactions.c.chain, transactions.c.seq, entries.c.id)
        .execution_options(yield_per=BATCH)
    )
    current: dict[str, Any] | None = None
    legs: list[_Leg] = []
    for row in connection.execute(statement):
        if current is None or row.id != current["id"]:
            if current is not None:
                yield current, legs
            current = {
                "id": row.id,
                "chain": row.chain,
                "seq": row.seq,
                "kind": row.kind,
                "reference": row.reference,
                "idempotency_key": row.idempotency_key,
                "metadata": row.metadata,
                "posted_at": row.posted_at,
                "prev_hash": row.prev_hash,
                "hash": row.hash,
            }
            legs = []
        if row.amount is not None:
            legs.append((row.code, row.entry_currency, int(row.amount), row.account_currency))
    if current is not None:
        yield current, legs


class _ChainWalk:
    """The hash-chain checks, fed one transaction at a time in (chain, seq) order: each
    link's number, its `prev_hash` and its own hash, then each chain's head."""

    def __init__(self, heads: dict[int, ChainHead], problems: list[LedgerProblem]) -> None:
        self._heads = heads
        self._problems = problems
        self._chain: int | None = None
        self._seq: int | None = None
        self._hash = GENESIS_HASH
        self._walked: set[int] = set()
        self.ok = True

    def link(self, txn: dict[str, Any], legs: list[_Leg]) -> None:
        chain, seq = int(txn["chain"]), int(txn["seq"])
        if chain != self._chain:
            self._end_chain()
            self._chain, self._seq, self._hash = chain, None, GENESIS_HASH
            self._walked.add(chain)
            if chain not in self._heads:
                self._fail(
                    LedgerProblem(
                        "ledger_chain_head",
                        chain,
                        ProblemCode.HEAD_MISSING,
                        f"chain {chain} has no head",
                    )
                )
        where = {"table": "ledger_transactions", "row_id": txn["id"], "seq": seq}
        if self._seq is not None and not follows(chain, self._seq, seq):
            self._fail(
                LedgerProblem(
                    code=ProblemCode.SEQ_GAP,
                    detail=f"chain {chain}: expected seq {next_seq(chain, self._seq)} after "
                    f"{self._seq}, found {seq}: transactions are missing or were inserted",
                    **where,
                )
            )
        if txn["prev_hash"] != self._hash:
            self._fail(
                LedgerProblem(
                    code=ProblemCode.PREV_HASH_MISMATCH,
                    detail="prev_hash does not match the hash of the preceding transaction "
                    f"of chain {chain}",
                    **where,
                )
            )
        recomputed = transaction_hash(
            seq=seq,
            kind=txn["kind"],
            reference=txn["reference"],
            idempotency_key=txn["idempotency_key"],
            metadata=txn["metadata"] or {},
            posted_at=txn["posted_at"],
            entries=((code, currency, amount) for code, currency, amount, _ in legs),
            prev_hash=txn["prev_hash"],
        )
        if recomputed != txn["hash"]:
            self._fail(
                LedgerProblem(
                    code=ProblemCode.HASH_MISMATCH,
                    detail="stored hash does not match the transaction's content: "
                    "it or its entries were altered",
                    **where,
                )
            )
        self._seq, self._hash = seq, txn["hash"]

    def finish(self) -> None:
        """The last chain's head, then the heads of chains with no transaction at all."""
        self._end_chain()
        for head in self._heads.values():
            if head.chain not in self._walked and head.hash != GENESIS_HASH:
                self._fail(
                    LedgerProblem(
                        "ledger_chain_head",
                        head.chain,
                        ProblemCode.HEAD_MISMATCH,
                        f"chain {head.chain}'s head names seq {head.seq} but the chain has no "
                        "transaction left: they were deleted or the head altered",
                        seq=head.seq,
                    )
                )

    def _end_chain(self) -> None:
        head = self._heads.get(self._chain) if self._chain is not None else None
        if head is None or (head.seq, head.hash) == (self._seq, self._hash):
            return
        self._fail(
            LedgerProblem(
                "ledger_chain_head",
                head.chain,
                ProblemCode.HEAD_MISMATCH,
                f"chain {head.chain}'s head is seq {head.seq} but its last transaction is seq "
                f"{self._seq}: transactions were deleted or the head altered",
                seq=head.seq,
            )
        )

    def _fail(self, problem: LedgerProblem) -> None:
        self.ok = False
        self._problems.append(problem)
