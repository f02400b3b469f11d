"""Errors the ledger raises; each refuses the whole request and moves no money."""

from __future__ import annotations


class LedgerError(Exception):
    """Base class: catching this catches every refusal of the ledger."""


class InvalidTransaction(LedgerError):
    """The request itself is malformed (amounts, keys, empty transfers, unbalanced legs)."""

    def __init__(self, reason: str) -> None:
        self.reason = reason
        super().__init__(f"invalid transaction: {reason}")


class UnknownAccount(LedgerError):
    """A transfer names an account that was never opened."""

    def __init__(self, *codes: str) -> None:
        self.codes = tuple(sorted(codes))
        super().__init__(f"unknown account(s): {', '.join(self.codes)}")


class CurrencyMismatch(LedgerError):
    """A transfer would move money between accounts held in different currencies."""

    def __init__(self, debit: str, credit: str, debit_currency: str, credit_currency: str) -> None:
        self.debit = debit
        self.credit = credit
        super().__init__(
            f"currency mismatch: {debit} is in {debit_currency} but {credit} is in "
            f"{credit_currency}"
        )


class LimitExceeded(LedgerError):
    """Posting would take an account's normal-side balance below its minimum."""

    def __init__(self, account: str) -> None:
        self.account = account
        super().__init__(f"limit exceeded: {account} would go below its minimum balance")


class AmountTooLarge(LedgerError):
    """Posting would take an account's balance out of the signed 64-bit range that every
    balance, on either database, is stored in."""

    def __init__(self, account: str) -> None:
        self.account = account
        super().__init__(f"amount too large: {account} would leave the 64-bit balance range")


class IdempotencyConflict(LedgerError):
    """The idempotency key was already used for a transaction with different content."""

    def __init__(self, idempotency_key: str) -> None:
        self.idempotency_key = idempotency_key
        super().__init__(
            f"idempotency key {idempotency_key!r} was already used for a different transaction"
        )


class AccountConflict(LedgerError):
    """An account with this code already exists with a different specification."""

    def __init__(self, code: str) -> None:
        self.code = code
        super().__init__(f"account {code} already exists with a different specification")


class UnknownTransaction(LedgerError):
    """No transaction has this id."""

    def __init__(self, transaction_id: int) -> None:
        self.transaction_id = transaction_id
        super().__init__(f"unknown ledger transaction {transaction_id}")
