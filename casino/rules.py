"""Immutable, validated rule sets.

`GameRules` is what decides the cards and the payouts (all that a replay or the odds need);
`TableRules` adds what a table accepts as a wager. A rule set that exists is a valid one:
construction refuses anything outside rules.md.
"""

import re
from dataclasses import asdict, dataclass, field, fields
from functools import cache
from typing import Any, Final, Self

from casino.errors import BetNotMultipleOfUnit, BetOutOfRange, InvalidRules

_CURRENCY: Final = re.compile(r"[A-Z]{3}")
MIN_SHOE_CARDS_AFTER_WAR: Final = 4


def _require_int(name: str, value: object, low: int, high: int | None = None) -> None:
    # bool is an int subclass, but `True` decks is a client's mistake, not a rule.
    if type(value) is not int:
        raise InvalidRules(name, "must be an integer")
    if value < low or (high is not None and value > high):
        bound = f"from {low} to {high}" if high is not None else f"at least {low}"
        raise InvalidRules(name, f"must be {bound}, got {value}")


def _require_bool(name: str, value: object) -> None:
    if type(value) is not bool:
        raise InvalidRules(name, "must be true or false")


@dataclass(frozen=True, slots=True)
class GameRules:
    """The rules that fix the cards dealt and what each outcome pays."""

    decks: int = 6
    jokers_per_deck: int = 0
    ace_low: bool = False
    burn_cards: int = 3
    tie_payout: int = 10
    war_tie_bonus: bool = False
    surrender_allowed: bool = True

    def __post_init__(self) -> None:
        _require_int("decks", self.decks, 1, 8)
        _require_int("jokers_per_deck", self.jokers_per_deck, 0, 2)
        _require_bool("ace_low", self.ace_low)
        _require_int("burn_cards", self.burn_cards, 0, 5)
        _require_int("tie_payout", self.tie_payout, 1, 100)
        _require_bool("war_tie_bonus", self.war_tie_bonus)
        _require_bool("surrender_allowed", self.surrender_allowed)

    @property
    def cards_for_war(self) -> int:
        """How many cards a hand that goes to war draws in all."""
        return 2 + self.burn_cards + 2


@dataclass(frozen=True, slots=True)
class TableRules:
    """A table's full rule set: the game plus the wagers it accepts, in one currency."""

    game: GameRules = field(default_factory=GameRules)
    currency: str = "USD"
    min_bet: int = 100
    max_bet: int = 100_000
    max_tie_bet: int = 10_000
    bet_unit: int = 100

    def __post_init__(self) -> None:
        if not isinstance(self.currency, str) or not _CURRENCY.fullmatch(self.currency):
            raise InvalidRules("currency", "must be a three-letter ISO 4217 code in capitals")
        _require_int("bet_unit", self.bet_unit, 2)
        if self.bet_unit % 2:
            raise InvalidRules("bet_unit", "must be even, so that half a bet is always whole")
        _require_int("min_bet", self.min_bet, self.bet_unit)
        _require_int("max_bet", self.max_bet, self.min_bet)
        _require_int("max_tie_bet", self.max_tie_bet, 0)
        for name in ("min_bet", "max_bet", "max_tie_bet"):
            if getattr(self, name) % self.bet_unit:
                raise InvalidRules(name, f"must be a multiple of bet_unit ({self.bet_unit})")

    def check_wager(self, bet: int, tie_bet: int) -> None:
        """Refuse a wager this table does not accept."""
        if not self.min_bet <= bet <= self.max_bet:
            raise BetOutOfRange(f"bet must be from {self.min_bet} to {self.max_bet}, got {bet}")
        if not 0 <= tie_bet <= self.max_tie_bet:
            raise BetOutOfRange(f"tie_bet must be from 0 to {self.max_tie_bet}, got {tie_bet}")
        for name, amount in (("bet", bet), ("tie_bet", tie_bet)):
            if amount % self.bet_unit:
                raise BetNotMultipleOfUnit(
                    f"{name} must be a multiple of {self.bet_unit}, got {amount}"
                )

    def as_dict(self) -> dict[str, Any]:
        """The flat form recorded with every hand and shown by the API (a fresh dict: the
        caller may keep or change it)."""
        return dict(_flat(self))

    @classmethod
    def from_dict(cls, flat: dict[str, Any]) -> Self:
        """Rebuild rules from `as_dict` output (or a client's request, defaults filling gaps)."""
        game_names = {f.name for f in fields(GameRules)}
        unknown = set(flat) - game_names - {f.name for f in fields(cls)}
        if unknown:
            raise InvalidRules(sorted(unknown)[0], "is not a rule")
        game = GameRules(**{k: v for k, v in flat.items() if k in game_names})
        return cls(game=game, **{k: v for k, v in flat.items() if k not in game_names})


@cache
def _flat(rules: TableRules) -> dict[str, Any]:
    """Rules are immutable and few: each one's flat form is worked out once."""
    flat = asdict(rules.game)
    flat.update({f.name: getattr(rules, f.name) for f in fields(rules) if f.name != "game"})
    return flat
