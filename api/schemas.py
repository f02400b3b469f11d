"""The REST contract's request and response bodies (api.md), as Pydantic models.

Requests are strict: amounts must be JSON integers (never floats or strings) and unknown
fields are refused, so a client's typo fails loudly instead of being ignored.
"""

from datetime import datetime
from typing import Annotated, Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

MAX_ID = 2**63 - 1  # ids are 64-bit: larger ones cannot exist
Id = Annotated[int, Field(ge=1, le=MAX_ID)]
Amount = Annotated[int, Field(ge=0, le=10**15)]
PositiveAmount = Annotated[int, Field(gt=0, le=10**15)]
Currency = Annotated[str, StringConstraints(pattern=r"^[A-Z]{3}$")]
# Free text never holds control characters (PostgreSQL refuses NUL in text outright).
_PRINTABLE = r"^[^\x00-\x1f\x7f]+$"
Name = Annotated[str, StringConstraints(min_length=1, max_length=100, pattern=_PRINTABLE)]
Reference = Annotated[str, StringConstraints(min_length=1, max_length=255, pattern=_PRINTABLE)]
ClientSeed = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9_-]{1,64}$")]
Outcome = Literal["player_win", "dealer_win", "surrender", "war_win", "war_tie", "war_loss"]


class RequestBody(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class ResponseBody(BaseModel):
    model_config = ConfigDict(frozen=True, serialize_by_alias=True, populate_by_name=True)

    SECRET_FIELDS: ClassVar[frozenset[str]] = frozenset()
    """Fields shown once and never stored: an idempotent replay returns them as null."""

    def stored_form(self) -> dict[str, Any]:
        """The body as an idempotency record keeps it: every secret field nulled."""
        body: dict[str, Any] = self.model_dump(mode="json", by_alias=True)
        return body | dict.fromkeys(self.SECRET_FIELDS)


# Players and wallets


class PlayerCreate(RequestBody):
    display_name: Name | None = None
    external_ref: Reference | None = None


SHOWN_ONCE = (
    "The bearer token, shown only in this response: only its hash is stored, so an "
    "idempotent replay returns null (issue another with POST /v1/players/{id}/tokens)."
)


class PlayerCreated(ResponseBody):
    SECRET_FIELDS = frozenset({"token"})

    id: int
    display_name: str | None
    external_ref: str | None
    token: str | None = Field(description=SHOWN_ONCE)


class PlayerToken(ResponseBody):
    SECRET_FIELDS = frozenset({"token"})

    player_id: int
    token: str | None = Field(description=SHOWN_ONCE)


class Balance(ResponseBody):
    currency: str
    available: int
    held: int = Field(description="Staked on a hand that awaits the player's decision.")


class PlayerView(ResponseBody):
    id: int
    display_name: str | None
    balances: list[Balance]


class CashierRequest(RequestBody):
    player_id: Id
    amount: PositiveAmount
    currency: Currency


class CashierReceipt(ResponseBody):
    transaction_id: int
    player_id: int
    amount: int
    currency: str
    balance_after: int


# Tables


class TableCreate(RequestBody):
    name: Name
    currency: Currency | None = None
    decks: int = 6
    jokers_per_deck: int = 0
    ace_low: bool = False
    burn_cards: int = 3
    tie_payout: int = 10
    war_tie_bonus: bool = False
    surrender_allowed: bool = True
    min_bet: int = 100
    max_bet: int = 100_000
    max_tie_bet: int = 10_000
    bet_unit: int = 100


class Rules(ResponseBody):
    decks: int
    jokers_per_deck: int
    ace_low: bool
    burn_cards: int
    tie_payout: int
    war_tie_bonus: bool
    surrender_allowed: bool
    currency: str
    min_bet: int
    max_bet: int
    max_tie_bet: int
    bet_unit: int


class TableView(Rules):
    id: int
    name: str
    open: bool
    created_at: datetime


# Seeds


class SeedState(ResponseBody):
    server_seed_hash: str
    client_seed: str
    next_nonce: int


class RotateSeeds(RequestBody):
    client_seed: ClientSeed | None = None


class RevealedSeedPair(ResponseBody):
    server_seed: str
    server_seed_hash: str
    client_seed: str
    hands: int
    revealed_at: datetime | None = None


class SeedRotation(ResponseBody):
    revealed: RevealedSeedPair
    current: SeedState


# Hands


class HandOpen(RequestBody):
    table_id: Id
    bet: PositiveAmount
    tie_bet: Amount = 0
    currency: Currency | None = Field(
        default=None, description="If given, must be the table's currency."
    )


class Decision(RequestBody):
    action: Literal["war", "surrender"]


class WarView(ResponseBody):
    burned: list[str]
    player_card: str
    dealer_card: str


class Fairness(ResponseBody):
    server_seed_hash: str
    client_seed: str
    nonce: int
    server_seed: str | None


class HandView(ResponseBody):
    id: int
    table_id: int
    player_id: int
    status: Literal["awaiting_decision", "settled"]
    currency: str
    bet: int
    tie_bet: int
    raise_amount: int = Field(alias="raise")
    player_card: str
    dealer_card: str
    war: WarView | None
    decision: Literal["war", "surrender"] | None
    decided_by: Literal["player", "timeout"] | None
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


# Pages


class HandPage(ResponseBody):
    items: list[HandView]
    next_cursor: str | None


class TablePage(ResponseBody):
    items: list[TableView]
    next_cursor: str | None


class RevealedSeedPage(ResponseBody):
    items: list[RevealedSeedPair]
    next_cursor: str | None
