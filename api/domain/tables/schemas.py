"""Tables and their rules: request and response bodies."""

from datetime import datetime

from api.http.schemas import Currency, Name, RequestBody, ResponseBody


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


class TablePage(ResponseBody):
    items: list[TableView]
    next_cursor: str | None
