"""Tables and their rules: request and response bodies."""

from datetime import datetime
from typing import TYPE_CHECKING, Annotated, Any, Final, Self

from pydantic import Field

from api.http.schemas import Currency, Name, RequestBody, ResponseBody
from api.pagination import Page
from casino.odds import decimal_text
from casino.rules import TableRules

if TYPE_CHECKING:  # the service's dataclass; importing it would bring the database layer
    from api.domain.tables.service import Table

_HOUSE: Final = TableRules()
"""The engine's default rules: a table created without a rule gets the engine's default."""


class TableCreate(RequestBody):
    name: Name
    currency: Currency | None = None
    decks: int = _HOUSE.game.decks
    jokers_per_deck: int = _HOUSE.game.jokers_per_deck
    ace_low: bool = _HOUSE.game.ace_low
    burn_cards: int = _HOUSE.game.burn_cards
    tie_payout: int = _HOUSE.game.tie_payout
    war_tie_bonus: bool = _HOUSE.game.war_tie_bonus
    surrender_allowed: bool = _HOUSE.game.surrender_allowed
    min_bet: int = _HOUSE.min_bet
    max_bet: int = _HOUSE.max_bet
    max_tie_bet: int = _HOUSE.max_tie_bet
    bet_unit: int = _HOUSE.bet_unit
    allow_player_advantage: bool = Field(
        default=False,
        description="Required to create a table whose rules give the player the edge on a bet.",
    )

    def rule_fields(self) -> dict[str, Any]:
        """The flat rules asked for, as `TableRules.from_dict` takes them."""
        return self.model_dump(exclude={"name", "allow_player_advantage"})


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


DecimalText = Annotated[str, Field(pattern=r"^-?[0-9]+\.[0-9]{6}$")]


class HouseEdge(ResponseBody):
    """Exact house edges rounded to 6 places, as text: display figures, not money. A bet the
    table does not offer has none."""

    war: DecimalText
    surrender: DecimalText | None
    tie_bet: DecimalText | None


class TableView(Rules):
    id: int
    name: str
    open: bool
    created_at: datetime
    house_edge: HouseEdge
    rtp: DecimalText = Field(description="Return to player of the war strategy, per unit bet.")

    @classmethod
    def of(cls, table: "Table") -> Self:
        odds = table.odds
        return cls(
            id=table.id,
            name=table.name,
            open=table.open,
            created_at=table.created_at,
            house_edge=HouseEdge(
                war=decimal_text(odds.war),
                surrender=None if odds.surrender is None else decimal_text(odds.surrender),
                tie_bet=None if odds.tie_bet is None else decimal_text(odds.tie_bet),
            ),
            rtp=decimal_text(odds.rtp),
            **table.rules.as_dict(),
        )


class TablePage(ResponseBody):
    items: list[TableView]
    next_cursor: str | None

    @classmethod
    def of(cls, page: "Page[Table]") -> Self:
        return cls(items=[TableView.of(t) for t in page.items], next_cursor=page.next_cursor)
