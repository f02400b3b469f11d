"""Pure value types of the ledger: what callers build and what posting returns.

The types every posting builds several of (a transfer, a request, an entry) are frozen
msgspec Structs, not frozen dataclasses: a frozen dataclass sets each field through
`object.__setattr__`, and building one cost ten times what a Struct costs (about 1.1 µs
against 0.12 for five fields), where a hand builds two dozen such values
(docs/performance-log.md, "A hand's answer without its model, and the value objects a hand
builds"). The rest, built once an account or once a read, stay dataclasses.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from types import MappingProxyType
from typing import Any

import msgspec

from ledger.errors import InvalidTransaction

_EMPTY: Mapping[str, Any] = MappingProxyType({})


class Side(StrEnum):
    """An account's normal balance side: the side on which its balance grows."""

    DEBIT = "debit"
    CREDIT = "credit"


@dataclass(frozen=True, slots=True)
class AccountSpec:
    """What an account is. `min_balance` bounds its normal-side balance (None: unlimited)."""

    code: str
    currency: str
    side: Side
    min_balance: int | None = None

    def __post_init__(self) -> None:
        if not self.code or len(self.code) > 200:
            raise InvalidTransaction("an account code has 1 to 200 characters")
        if not self.currency or len(self.currency) > 16:
            raise InvalidTransaction("a currency has 1 to 16 characters")
        if self.min_balance is not None and (
            isinstance(self.min_balance, bool) or not isinstance(self.min_balance, int)
        ):
            raise InvalidTransaction("min_balance is an integer number of minor units")
        object.__setattr__(self, "side", Side(self.side))


class Transfer(msgspec.Struct, frozen=True):
    """Move `amount` minor units: debit one account, credit another, same currency."""

    debit: str
    credit: str
    amount: int

    def __post_init__(self) -> None:
        if isinstance(self.amount, bool) or not isinstance(self.amount, int):
            raise InvalidTransaction("a transfer amount is an integer number of minor units")
        if self.amount <= 0:
            raise InvalidTransaction(f"a transfer amount must be positive, not {self.amount}")
        if self.debit == self.credit:
            raise InvalidTransaction(f"a transfer cannot debit and credit {self.debit}")


class TransactionRequest(msgspec.Struct, frozen=True):
    """A set of linked transfers that post together or not at all."""

    kind: str
    idempotency_key: str
    transfers: tuple[Transfer, ...]
    reference: str | None = None
    metadata: Mapping[str, Any] = msgspec.field(default_factory=lambda: _EMPTY)

    def __post_init__(self) -> None:
        msgspec.structs.force_setattr(self, "transfers", tuple(self.transfers))
        check_transaction(self.kind, self.idempotency_key, self.reference, len(self.transfers))


def check_transaction(
    kind: str, idempotency_key: str, reference: str | None, movements: int
) -> None:
    """What every transaction meets, a caller's request or the ledger's own reversal: at least
    one movement (a transfer, or a reversed entry) and the sizes of the columns recording it."""
    if not movements:
        raise InvalidTransaction("a transaction needs at least one transfer")
    if not kind or len(kind) > 64:
        raise InvalidTransaction("a transaction kind has 1 to 64 characters")
    if not idempotency_key or len(idempotency_key) > 255:
        raise InvalidTransaction("an idempotency key has 1 to 255 characters")
    if reference is not None and len(reference) > 255:
        raise InvalidTransaction("a reference has at most 255 characters")


class Entry(msgspec.Struct, frozen=True):
    """One leg of a posted transaction; amount is signed: + debit, - credit."""

    account: str
    currency: str
    amount: int


@dataclass(frozen=True, slots=True)
class PostedTransaction:
    """A transaction as recorded; `replayed` is True when an idempotent retry returned it."""

    id: int
    seq: int
    kind: str
    reference: str | None
    metadata: Mapping[str, Any]
    posted_at: datetime
    entries: tuple[Entry, ...]
    hash: str
    replayed: bool = False
    idempotency_key: str = ""
    chain: int = 1
