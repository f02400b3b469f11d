"""What the ledger verifier reports: its checks, its problem codes, and the report.

The codes are the verifier's own: a reader that groups problems by check (the audit) takes
the grouping from `CHECK_OF`, so a code added here cannot go unclassified.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from enum import StrEnum
from typing import Any, Final


class LedgerCheck(StrEnum):
    """The verifier's three checks: every problem it reports belongs to exactly one."""

    HASH_CHAIN = "hash_chain"
    TRIAL_BALANCE = "trial_balance"
    STORED_BALANCES = "stored_balances"


class ProblemCode(StrEnum):
    """Every code the verifier reports: a report's reader groups them with `CHECK_OF`."""

    SEQ_GAP = "seq_gap"
    PREV_HASH_MISMATCH = "prev_hash_mismatch"
    HASH_MISMATCH = "hash_mismatch"
    HEAD_MISMATCH = "head_mismatch"
    HEAD_MISSING = "head_missing"
    UNBALANCED = "unbalanced"
    NO_ENTRIES = "no_entries"
    CURRENCY_MISMATCH = "currency_mismatch"
    ORPHAN_ENTRIES = "orphan_entries"
    BALANCE_MISMATCH = "balance_mismatch"
    LIMIT_BREACHED = "limit_breached"


CHECK_OF: Final[Mapping[ProblemCode, LedgerCheck]] = {
    ProblemCode.SEQ_GAP: LedgerCheck.HASH_CHAIN,
    ProblemCode.PREV_HASH_MISMATCH: LedgerCheck.HASH_CHAIN,
    ProblemCode.HASH_MISMATCH: LedgerCheck.HASH_CHAIN,
    ProblemCode.HEAD_MISMATCH: LedgerCheck.HASH_CHAIN,
    ProblemCode.HEAD_MISSING: LedgerCheck.HASH_CHAIN,
    ProblemCode.UNBALANCED: LedgerCheck.TRIAL_BALANCE,
    ProblemCode.NO_ENTRIES: LedgerCheck.TRIAL_BALANCE,
    ProblemCode.CURRENCY_MISMATCH: LedgerCheck.TRIAL_BALANCE,
    ProblemCode.ORPHAN_ENTRIES: LedgerCheck.TRIAL_BALANCE,
    ProblemCode.BALANCE_MISMATCH: LedgerCheck.STORED_BALANCES,
    ProblemCode.LIMIT_BREACHED: LedgerCheck.STORED_BALANCES,
}


def codes_of(check: LedgerCheck) -> frozenset[ProblemCode]:
    """The problem codes one check reports."""
    return frozenset(code for code, owner in CHECK_OF.items() if owner == check)


@dataclass(frozen=True, slots=True)
class LedgerProblem:
    """One discrepancy: which table, which row (id), what kind of problem, in words."""

    table: str
    row_id: int | None
    code: ProblemCode
    detail: str
    seq: int | None = None


@dataclass(frozen=True, slots=True)
class ChainHead:
    """A chain's newest link as its head row names it: what an auditor files outside the
    database, so that a later audit can tell the chain was not rewritten before it."""

    chain: int
    seq: int
    hash: str


@dataclass(frozen=True, slots=True)
class LedgerReport:
    problems: tuple[LedgerProblem, ...]
    transactions_checked: int
    entries_checked: int
    accounts_checked: int
    trial_balance: dict[str, int]
    heads: tuple[ChainHead, ...]
    chain_ok: bool = field(default=True)

    @property
    def ok(self) -> bool:
        return not self.problems

    def as_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "transactions_checked": self.transactions_checked,
            "entries_checked": self.entries_checked,
            "accounts_checked": self.accounts_checked,
            "trial_balance": dict(self.trial_balance),
            "heads": [asdict(head) for head in self.heads],
            "chain_ok": self.chain_ok,
            "problems": [asdict(problem) for problem in self.problems],
        }
