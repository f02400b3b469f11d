"""A batch of transactions about to be posted, worked out before the database is written.

Pure: from the requests and the accounts they name come each transaction's signed legs and
fingerprint, the checks that need the accounts (currencies), what each account's balance
does over the batch, and the links that append the batch to its hash chain.
`ledger.posting` reads the accounts and the chain's head, and writes what is computed here.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import msgspec

from ledger.chain import request_fingerprint, stored_metadata, transaction_hash
from ledger.chains import next_seq
from ledger.errors import CurrencyMismatch, InvalidTransaction
from ledger.model import Entry, Side, TransactionRequest

INT64_MAX = 2**63 - 1
INT64_MIN = -(2**63)


@dataclass(frozen=True, slots=True)
class Account:
    """An open account, as posting needs it: its row id, currency and normal side."""

    id: int
    currency: str
    side: str


class Pending(msgspec.Struct, frozen=True):
    """A transaction about to be posted, checked by `check_transaction` (a request checks
    itself when built): legs signed + debit, - credit."""

    kind: str
    idempotency_key: str
    reference: str | None
    metadata: dict[str, Any]
    legs: tuple[tuple[str, int], ...]
    pairs: tuple[tuple[str, str], ...]
    fingerprint: str

    @classmethod
    def of(
        cls,
        *,
        kind: str,
        idempotency_key: str,
        reference: str | None,
        metadata: Mapping[str, Any],
        legs: tuple[tuple[str, int], ...],
        pairs: tuple[tuple[str, str], ...],
    ) -> Pending:
        stored = stored_metadata(metadata)
        fingerprint = request_fingerprint(
            kind=kind, reference=reference, metadata=stored, legs=legs
        )
        return cls(kind, idempotency_key, reference, stored, legs, pairs, fingerprint)

    @classmethod
    def of_request(cls, request: TransactionRequest) -> Pending:
        legs: list[tuple[str, int]] = []
        for transfer in request.transfers:
            legs.append((transfer.debit, transfer.amount))
            legs.append((transfer.credit, -transfer.amount))
        return cls.of(
            kind=request.kind,
            idempotency_key=request.idempotency_key,
            reference=request.reference,
            metadata=request.metadata,
            legs=tuple(legs),
            pairs=tuple((transfer.debit, transfer.credit) for transfer in request.transfers),
        )


def check_currencies(pendings: Sequence[Pending], accounts: Mapping[str, Account]) -> None:
    """Refuse a transfer between currencies, and a transaction whose legs do not sum to zero
    in each currency."""
    for pending in pendings:
        for debit, credit in pending.pairs:
            if accounts[debit].currency != accounts[credit].currency:
                raise CurrencyMismatch(
                    debit, credit, accounts[debit].currency, accounts[credit].currency
                )
        per_currency: dict[str, int] = defaultdict(int)
        for code, amount in pending.legs:
            per_currency[accounts[code].currency] += amount
        unbalanced = {currency: total for currency, total in per_currency.items() if total}
        if unbalanced:
            raise InvalidTransaction(f"entries do not sum to zero per currency: {unbalanced}")


class BalanceMove(msgspec.Struct, frozen=True):
    """One account's change over a whole batch, in its normal-side terms.

    `lowest` is the lowest running change along the batch (for a single transaction, the
    change itself): the limit must hold at every step, not only at the end, so a stake
    that overdraws the wallet is refused even if the settlement after it would refill it.
    `highest` is the highest, for the other bound every balance has: a signed 64-bit
    integer, which neither database may leave (SQLite would turn the sum into a float).
    """

    account_id: int
    code: str
    delta: int
    lowest: int
    highest: int = 0

    @property
    def ceiling(self) -> int:
        """The balance above which this move would leave the 64-bit range."""
        return INT64_MAX - max(self.highest, 0)

    @property
    def floor(self) -> int:
        """The balance below which it would (an account with no limit may go negative)."""
        return INT64_MIN - min(self.lowest, 0)


def balance_moves(
    pendings: Sequence[Pending], accounts: Mapping[str, Account]
) -> list[BalanceMove]:
    running: dict[str, int] = defaultdict(int)
    lowest: dict[str, int] = {}
    highest: dict[str, int] = {}
    for pending in pendings:
        for code, amount in pending.legs:
            running[code] += amount if accounts[code].side == Side.DEBIT else -amount
        for code in {code for code, _ in pending.legs}:
            lowest[code] = min(lowest.get(code, running[code]), running[code])
            highest[code] = max(highest.get(code, running[code]), running[code])
    moves = [
        BalanceMove(accounts[code].id, code, running[code], lowest[code], highest[code])
        for code in running
        if running[code] != 0 or lowest[code] < 0
    ]
    # In account-id order, so that concurrent postings cannot deadlock.
    return sorted(moves, key=lambda move: move.account_id)


class Link(msgspec.Struct, frozen=True):
    """A chain's newest link: where the next transaction attaches."""

    chain: int
    seq: int
    hash: str


class Linked(msgspec.Struct, frozen=True):
    """A transaction of the batch in its place in the chain, hashed, with its entries."""

    pending: Pending
    seq: int
    prev_hash: str
    hash: str
    entries: tuple[Entry, ...]


def link(
    pendings: Sequence[Pending],
    accounts: Mapping[str, Account],
    posted_at: datetime,
    head: Link,
) -> list[Linked]:
    """The batch appended, in order, after `head`: each transaction's hash covers the one
    before it."""
    seq, prev_hash = head.seq, head.hash
    linked: list[Linked] = []
    for pending in pendings:
        seq = next_seq(head.chain, seq)
        legs = tuple(Entry(code, accounts[code].currency, amount) for code, amount in pending.legs)
        digest = transaction_hash(
            seq=seq,
            kind=pending.kind,
            reference=pending.reference,
            idempotency_key=pending.idempotency_key,
            metadata=pending.metadata,
            posted_at=posted_at,
            entries=((e.account, e.currency, e.amount) for e in legs),
            prev_hash=prev_hash,
        )
        linked.append(Linked(pending, seq, prev_hash, digest, legs))
        prev_hash = digest
    return linked
