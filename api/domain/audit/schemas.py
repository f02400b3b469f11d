"""The audit's bodies: the endpoints' responses and the command line's `--json` document.

Each is built from the typed results of `api.domain.audit.results` (`from_attributes`): one
representation of each result, presented two ways. The API shows every field; the command
line's document (`model_dump(mode="json", exclude_unset=True)`) leaves out what a result
does not carry: a casino problem's `seq` and a difference's empty `transaction_ids`, which
the API shows as null.

Imports no service code (only pydantic, the engine and other schemas), so that a command
can present an engine's hand (`DerivedHand.of`) without loading the database layers.
"""

from datetime import datetime
from typing import Any, Literal, Self

from pydantic import Field, field_serializer, model_validator

from api.domain.hands.schemas import HandView, WarView
from api.domain.tables.schemas import Rules
from api.http.schemas import DecidedBy, ResponseBody
from casino.hand import Action, Hand, summary

# Audit of one hand


class AuditDifference(ResponseBody):
    field: str = Field(description="What disagrees: a hand field, or `ledger.<kind>.<what>`.")
    recorded: Any = Field(description="What the hand record or the ledger holds.")
    derived: Any = Field(description="What the replay from seeds and recorded rules says.")
    transaction_ids: list[int] | None = None

    @model_validator(mode="before")
    @classmethod
    def _transactions_only_when_named(cls, difference: Any) -> Any:
        """A difference about no ledger transaction leaves `transaction_ids` unset."""
        if isinstance(difference, dict) or difference.transaction_ids:
            return difference
        return {
            "field": difference.field,
            "recorded": difference.recorded,
            "derived": difference.derived,
        }


class AuditSeeds(ResponseBody):
    seed_pair_id: int
    server_seed: str
    server_seed_hash: str
    client_seed: str
    nonce: int
    revealed_at: datetime | None
    commitment_ok: bool = Field(description="SHA-256 of the server seed's bytes is the hash.")


class DerivedHand(ResponseBody):
    status: Literal["awaiting_decision", "settled"]
    cards: list[str] = Field(description="Every card drawn, in dealing order.")
    player_card: str
    dealer_card: str
    war: WarView | None
    decision: Action | None
    outcome: str | None
    bet: int
    tie_bet: int
    raise_amount: int = Field(alias="raise")
    total_staked: int
    total_returned: int | None
    main_net: int | None
    tie_net: int
    net: int | None

    @classmethod
    def of(cls, hand: Hand) -> Self:
        """The engine's hand as the audit shows it."""
        return cls.model_validate(summary(hand))


class LedgerEntryView(ResponseBody):
    account: str
    currency: str
    amount: int = Field(description="Signed: positive debits, negative credits.")


class LedgerTransactionView(ResponseBody):
    id: int
    seq: int
    kind: str
    reference: str | None
    posted_at: datetime
    entries: list[LedgerEntryView]
    hash: str


class FirstDeal(ResponseBody):
    player_card: str
    dealer_card: str


class GameRecall(ResponseBody):
    """What a regulator's game-recall asks for, in one place."""

    started_at: datetime
    ended_at: datetime | None
    balance_before: int
    balance_after: int | None
    total_staked: int
    total_returned: int | None
    net: int | None
    decision: Action | None
    decided_by: DecidedBy | None
    first_deal: FirstDeal
    war: WarView | None
    outcome: str | None
    rules: Rules


class TokenActor(ResponseBody):
    """A token as the audit names it: which, whose role and name, and who issued it."""

    token_id: int
    role: str
    name: str | None
    issued_by: int | None


class HandActors(ResponseBody):
    placed: TokenActor | None = Field(description="Null for hands from before actors.")
    decided: TokenActor | None = Field(
        description="Null while undecided, for a timeout (the house), or from before actors."
    )


class HandAudit(ResponseBody):
    hand: HandView | None = Field(
        description="Null when the record no longer fits the hand schema; `differences` say why."
    )
    seeds: AuditSeeds | None = Field(description="Null when the hand's seed pair is gone.")
    derived: DerivedHand | None = Field(description="Null when the hand cannot be replayed.")
    ledger_transactions: list[LedgerTransactionView]
    verdict: Literal["match", "mismatch"]
    differences: list[AuditDifference]
    recall: GameRecall | None = Field(
        description="Null when the record no longer fits the recall schema; `differences` say why."
    )
    actors: HandActors


# Ledger integrity


class IntegrityProblem(ResponseBody):
    table: str
    row_id: int | None
    code: str
    detail: str
    seq: int | None = None


class ChainHead(ResponseBody):
    chain: int = Field(description="The chain's number, 1 to 16.")
    seq: int = Field(
        description="Its newest transaction's seq (chain 1's last before the chains "
        "began, for a chain with none yet)."
    )
    hash: str = Field(description="That transaction's hash; the genesis hash for an empty chain.")


class HashChainSection(ResponseBody):
    ok: bool
    transactions_checked: int
    heads: list[ChainHead] = Field(
        description="Every chain's head: file them outside the database, so that the next audit "
        "can show each chain still contains them."
    )
    problems: list[IntegrityProblem]


class TrialBalanceSection(ResponseBody):
    ok: bool
    entries_checked: int
    by_currency: dict[str, int] = Field(description="Sum of all entries; zero when balanced.")
    problems: list[IntegrityProblem]


class StoredBalancesSection(ResponseBody):
    ok: bool
    accounts_checked: int
    problems: list[IntegrityProblem]


class HeldCurrency(ResponseBody):
    currency: str
    held: int
    unsettled_stakes: int
    unsettled_hands: int
    ok: bool


class HeldSection(ResponseBody):
    ok: bool
    by_currency: list[HeldCurrency]
    problems: list[IntegrityProblem]


class ReferencesSection(ResponseBody):
    ok: bool
    problems: list[IntegrityProblem]


class NonceSection(ResponseBody):
    ok: bool
    seed_pairs_checked: int
    problems: list[IntegrityProblem] = Field(
        description="`nonce_gap` (naming the seed pair and the missing nonces), "
        "`nonce_duplicate`, `nonce_out_of_range`, `unknown_seed_pair` (naming the hand)."
    )


class LedgerIntegrity(ResponseBody):
    ok: bool
    hash_chain: HashChainSection
    trial_balance: TrialBalanceSection
    stored_balances: StoredBalancesSection
    held_for_unsettled_hands: HeldSection
    hand_references: ReferencesSection
    nonce_continuity: NonceSection
    other_problems: list[IntegrityProblem]


# The command line's period audit


class HandMismatchBody(ResponseBody):
    hand_id: int
    differences: list[AuditDifference]


class HandReplay(ResponseBody):
    ok: bool
    hands_checked: int
    settled: int
    awaiting_decision: int
    mismatched: int
    seconds: float
    hands_per_second: float
    jobs: int = Field(description="Processes that replayed the hands (1: in process).")
    mismatches: list[HandMismatchBody]

    @field_serializer("seconds")
    def _milliseconds(self, seconds: float) -> float:
        return round(seconds, 3)

    @field_serializer("hands_per_second")
    def _whole(self, rate: float) -> int:
        return round(rate)


class AuditRange(ResponseBody):
    start: datetime | None
    end: datetime | None
    by: Literal["created_at"]

    @field_serializer("start", "end")
    def _iso(self, moment: datetime | None) -> str | None:
        return moment.isoformat() if moment is not None else None


class PeriodAuditReport(ResponseBody):
    """`casino-war audit --json`."""

    ok: bool
    range: AuditRange = Field(validation_alias="period")
    hands: HandReplay
    ledger: LedgerIntegrity
