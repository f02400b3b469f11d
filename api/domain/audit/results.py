"""The audit's typed results: what the replay and the integrity checks found, as plain
frozen values.

One representation of each: the command line's summary reads these attributes, and its
`--json` document and the API's bodies are the schemas of `api.domain.audit.schemas` built
from them (`from_attributes`).
"""

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any

from api.domain.audit.reads import HandRow
from api.domain.hands.ledger import LedgerTxn
from casino.hand import Hand
from ledger.report import ChainHead, LedgerProblem

# The replay


@dataclass(frozen=True, slots=True)
class Difference:
    """One disagreement: the field, what is recorded (record or ledger), what the replay says."""

    field: str
    recorded: Any
    derived: Any
    transaction_ids: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class HandMismatch:
    hand_id: int
    differences: tuple[Difference, ...]


@dataclass(frozen=True, slots=True)
class HandAuditResult:
    """The replay of a period: counts, and only the hands that did not match (memory stays
    flat however many hands match), in hand-id order."""

    hands_checked: int = 0
    settled: int = 0
    awaiting_decision: int = 0
    mismatches: tuple[HandMismatch, ...] = ()
    seconds: float = 0.0
    jobs: int = 1  # processes that replayed the hands (1: in the calling process)

    @property
    def ok(self) -> bool:
        return not self.mismatches

    @property
    def mismatched(self) -> int:
        return len(self.mismatches)

    @property
    def hands_per_second(self) -> float:
        return self.hands_checked / self.seconds if self.seconds > 0 else 0.0

    @classmethod
    def folded(
        cls, parts: Iterable["HandAuditResult"], *, seconds: float, jobs: int
    ) -> "HandAuditResult":
        """Ranges of hands folded in id order: they read exactly like one pass over them all."""
        parts = tuple(parts)
        return cls(
            hands_checked=sum(part.hands_checked for part in parts),
            settled=sum(part.settled for part in parts),
            awaiting_decision=sum(part.awaiting_decision for part in parts),
            mismatches=tuple(mismatch for part in parts for mismatch in part.mismatches),
            seconds=seconds,
            jobs=jobs,
        )


@dataclass(frozen=True, slots=True)
class SingleHandAudit:
    """One hand's replay: its row, the hand the engine derives (None: it cannot be
    replayed), what disagrees, and whether its seed pair kept its commitment."""

    row: HandRow
    derived: Hand | None
    differences: tuple[Difference, ...]
    txns: tuple[LedgerTxn, ...]
    commitment_ok: bool


# The whole-ledger checks


class CasinoCode(StrEnum):
    """The codes of what only the casino can check of its ledger (beyond `ledger.verify`)."""

    HELD_MISMATCH = "held_mismatch"
    UNKNOWN_HAND = "unknown_hand"
    NONCE_GAP = "nonce_gap"
    NONCE_DUPLICATE = "nonce_duplicate"
    NONCE_OUT_OF_RANGE = "nonce_out_of_range"
    UNKNOWN_SEED_PAIR = "unknown_seed_pair"


@dataclass(frozen=True, slots=True)
class CasinoProblem:
    """A casino-level discrepancy, naming the row (`table`, `row_id`) it is about."""

    table: str
    row_id: int | None
    code: CasinoCode
    detail: str


@dataclass(frozen=True, slots=True)
class HashChainCheck:
    transactions_checked: int
    heads: tuple[ChainHead, ...]
    problems: tuple[LedgerProblem, ...]

    @property
    def ok(self) -> bool:
        return not self.problems


@dataclass(frozen=True, slots=True)
class TrialBalanceCheck:
    entries_checked: int
    by_currency: Mapping[str, int]  # the sum of every entry: zero when balanced
    problems: tuple[LedgerProblem, ...]

    @property
    def ok(self) -> bool:
        return not self.problems


@dataclass(frozen=True, slots=True)
class StoredBalancesCheck:
    accounts_checked: int
    problems: tuple[LedgerProblem, ...]

    @property
    def ok(self) -> bool:
        return not self.problems


@dataclass(frozen=True, slots=True)
class HeldByCurrency:
    currency: str
    held: int
    unsettled_stakes: int
    unsettled_hands: int

    @property
    def ok(self) -> bool:
        return self.held == self.unsettled_stakes


@dataclass(frozen=True, slots=True)
class HeldCheck:
    by_currency: tuple[HeldByCurrency, ...]
    problems: tuple[CasinoProblem, ...]

    @property
    def ok(self) -> bool:
        return all(held.ok for held in self.by_currency) and not self.problems


@dataclass(frozen=True, slots=True)
class ReferencesCheck:
    problems: tuple[CasinoProblem, ...]

    @property
    def ok(self) -> bool:
        return not self.problems


@dataclass(frozen=True, slots=True)
class NonceCheck:
    seed_pairs_checked: int
    problems: tuple[CasinoProblem, ...]

    @property
    def ok(self) -> bool:
        return not self.problems


@dataclass(frozen=True, slots=True)
class LedgerAudit:
    """`ledger.verify`'s report grouped by check, and the casino's own checks."""

    hash_chain: HashChainCheck
    trial_balance: TrialBalanceCheck
    stored_balances: StoredBalancesCheck
    held_for_unsettled_hands: HeldCheck
    hand_references: ReferencesCheck
    nonce_continuity: NonceCheck
    other_problems: tuple[LedgerProblem, ...]  # a verifier code no check here claims

    @property
    def ok(self) -> bool:
        """No problem anywhere (money held is judged by its problems, like the rest)."""
        sections = (
            self.hash_chain,
            self.trial_balance,
            self.stored_balances,
            self.held_for_unsettled_hands,
            self.hand_references,
            self.nonce_continuity,
        )
        return not self.other_problems and not any(section.problems for section in sections)


# The period audit


@dataclass(frozen=True, slots=True)
class Period:
    """Hands created in [start, end) (UTC), either bound open."""

    start: datetime | None
    end: datetime | None

    @property
    def by(self) -> str:
        """The column hands are selected by."""
        return "created_at"


@dataclass(frozen=True, slots=True)
class PeriodAudit:
    period: Period
    hands: HandAuditResult
    ledger: LedgerAudit

    @property
    def ok(self) -> bool:
        return self.hands.ok and self.ledger.ok
