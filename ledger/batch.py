"""The pure part of posting a batch: its transactions checked, netted per account, and
linked into a hash chain. `posting` and `append` write what these functions decide, so the
two ways of posting cannot disagree on a balance, a limit or a link."""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

from ledger.chain import canonical_json, request_fingerprint, transaction_hash
from ledger.chains import next_seq
from ledger.errors import CurrencyMismatch, InvalidTransaction, UnknownAccount
from ledger.model import Entry, Side, TransactionRequest


class Account(Protocol):
    """What posting needs of an account's row."""

    @property
    def id(self) -> int: ...

    @property
    def currency(self) -> str: ...

    @property
    def side(self) -> str: ...


@dataclass(frozen=True, slots=True)
class Pending:
    """A transaction about to be posted: legs signed + debit, - credit."""

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
        if not legs:
            raise InvalidTransaction("a transaction needs at least one transfer")
        stored_metadata: dict[str, Any] = json.loads(canonical_json(dict(metadata)))
        fingerprint = request_fingerprint(
            kind=kind, reference=reference, metadata=stored_metadata, legs=legs
        )
        return cls(kind, idempotency_key, reference, stored_metadata, legs, pairs, fingerprint)


def pending(request: TransactionRequest) -> Pending:
    legs: list[tuple[str, int]] = []
    for transfer in request.transfers:
        legs.append((transfer.debit, transfer.amount))
        legs.append((transfer.credit, -transfer.amount))
    return Pending.of(
        kind=request.kind,
        idempotency_key=request.idempotency_key,
        reference=request.reference,
        metadata=request.metadata,
        legs=tuple(legs),
        pairs=tuple((transfer.debit, transfer.credit) for transfer in request.transfers),
    )


def check_balanced(pendings: Sequence[Pending], by_code: Mapping[str, Account]) -> None:
    """Every account known, every transfer within one currency, every transaction summing to
    zero per currency."""
    missing = {code for item in pendings for code, _ in item.legs} - by_code.keys()
    if missing:
        raise UnknownAccount(*sorted(missing))
    for item in pendings:
        for debit, credit in item.pairs:
            if by_code[debit].currency != by_code[credit].currency:
                raise CurrencyMismatch(
                    debit, credit, by_code[debit].currency, by_code[credit].currency
                )
        per_currency: dict[str, int] = defaultdict(int)
        for code, amount in item.legs:
            per_currency[by_code[code].currency] += amount
        unbalanced = {currency: total for currency, total in per_currency.items() if total}
        if unbalanced:
            raise InvalidTransaction(f"entries do not sum to zero per currency: {unbalanced}")


@dataclass(frozen=True, slots=True)
class BalanceMove:
    """One account's change over a whole batch, in its normal-side terms.

    `lowest` is the lowest running change along the batch (for a single transaction, the
    change itself): the limit must hold at every step, not only at the end, so a stake
    that overdraws the wallet is refused even if the settlement after it would refill it.
    """

    account_id: int
    code: str
    delta: int
    lowest: int


def balance_moves(pendings: Sequence[Pending], by_code: Mapping[str, Account]) -> list[BalanceMove]:
    running: dict[str, int] = defaultdict(int)
    lowest: dict[str, int] = {}
    for item in pendings:
        for code, amount in item.legs:
            running[code] += amount if by_code[code].side == Side.DEBIT else -amount
        for code in {code for code, _ in item.legs}:
            lowest[code] = min(lowest.get(code, running[code]), running[code])
    moves = [
        BalanceMove(by_code[code].id, code, running[code], lowest[code])
        for code in running
        if running[code] != 0 or lowest[code] < 0
    ]
    # In account-id order, so that concurrent postings cannot deadlock.
    return sorted(moves, key=lambda move: move.account_id)


@dataclass(frozen=True, slots=True)
class ChainLink:
    """A transaction's place in its hash chain, and its entries as hashed."""

    seq: int
    chain: int
    prev_hash: str
    hash: str
    entries: tuple[Entry, ...]


def chain_links(
    pendings: Sequence[Pending],
    by_code: Mapping[str, Account],
    posted_at: datetime,
    chain: int,
    head_seq: int,
    head_hash: str,
) -> list[ChainLink]:
    """The batch's links after the chain's head, each hashing its predecessor's hash."""
    links: list[ChainLink] = []
    seq, prev_hash = head_seq, head_hash
    for item in pendings:
        seq = next_seq(chain, seq)
        entries = tuple(Entry(code, by_code[code].currency, amount) for code, amount in item.legs)
        digest = transaction_hash(
            seq=seq,
            kind=item.kind,
            reference=item.reference,
            idempotency_key=item.idempotency_key,
            metadata=item.metadata,
            posted_at=posted_at,
            entries=((e.account, e.currency, e.amount) for e in entries),
            prev_hash=prev_hash,
        )
        links.append(ChainLink(seq, chain, prev_hash, digest, entries))
        prev_hash = digest
    return links
