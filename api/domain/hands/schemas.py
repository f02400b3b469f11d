"""Hands and hands awaiting a decision: request and response bodies."""

from datetime import datetime
from typing import Annotated, Literal

from pydantic import Field

from api.domain.tables.schemas import Rules
from api.http.schemas import (
    Amount,
    Currency,
    DecidedBy,
    Id,
    PositiveAmount,
    RequestBody,
    ResponseBody,
    lax_enum,
)
from casino.hand import Action, HandStatus, Outcome


class HandOpen(RequestBody):
    table_id: Id
    bet: PositiveAmount
    tie_bet: Amount = 0
    currency: Currency | None = Field(
        default=None, description="If given, must be the table's currency."
    )


class Decision(RequestBody):
    action: Annotated[Action, lax_enum(Action)]


class WarView(ResponseBody):
    burned: list[str]
    player_card: str
    dealer_card: str


class Fairness(ResponseBody):
    server_seed_hash: str
    client_seed: str
    nonce: int
    server_seed: str | None


class EngineView(ResponseBody):
    version: str
    rules_hash: str | None


class HandView(ResponseBody):
    id: int
    table_id: int
    player_id: int
    status: HandStatus
    currency: str
    bet: int
    tie_bet: int
    raise_amount: int = Field(alias="raise")
    player_card: str
    dealer_card: str
    war: WarView | None
    decision: Action | None
    decided_by: DecidedBy | None
    outcome: Outcome | None
    total_staked: int
    total_returned: int | None
    net: int | None
    balance_before: int
    balance_after: int | None
    fairness: Fairness
    rules: Rules
    created_at: datetime
    settled_at: datetime | None
    engine: EngineView | None = Field(
        description="The game software that dealt the hand and the SHA-256 of its rules' "
        "canonical JSON; null for hands dealt before versions were recorded."
    )


class HandPage(ResponseBody):
    items: list[HandView]
    next_cursor: str | None


class UnfinishedHandView(ResponseBody):
    id: int
    player_id: int
    table_id: int
    currency: str
    bet: int
    tie_bet: int
    total_staked: int
    player_card: str
    dealer_card: str
    created_at: datetime
    waiting_seconds: int
    overdue: bool = Field(description="Waiting longer than the decision timeout.")


class ResolvedHandView(ResponseBody):
    hand_id: int
    resolution: Literal["surrender", "war", "skipped"]
    reason: str
    outcome: str | None
    net: int | None


class ResolvedHands(ResponseBody):
    items: list[ResolvedHandView]


class UnfinishedReport(ResponseBody):
    timeout_seconds: int
    abandoned_tie_action: Literal["surrender", "war"]
    items: list[UnfinishedHandView]
