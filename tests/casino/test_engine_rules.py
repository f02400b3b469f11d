"""Rule sets: the defaults of rules.md, and every invalid field refused by name."""

from typing import Any

import pytest

from casino.errors import BetNotMultipleOfUnit, BetOutOfRange, InvalidRules
from casino.rules import GameRules, TableRules


def test_default_game_rules_are_those_of_rules_md() -> None:
    rules = GameRules()
    assert (rules.decks, rules.jokers_per_deck, rules.ace_low, rules.burn_cards) == (6, 0, False, 3)
    assert (rules.tie_payout, rules.war_tie_bonus, rules.surrender_allowed) == (10, False, True)


def test_default_table_accepts_the_standard_wagers() -> None:
    table = TableRules()
    assert (table.currency, table.min_bet, table.max_bet) == ("USD", 100, 100_000)
    assert (table.max_tie_bet, table.bet_unit) == (10_000, 100)
    assert table.game == GameRules()


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("decks", 0),
        ("decks", 9),
        ("decks", True),
        ("decks", 6.0),
        ("jokers_per_deck", -1),
        ("jokers_per_deck", 3),
        ("ace_low", 1),
        ("burn_cards", -1),
        ("burn_cards", 6),
        ("tie_payout", 0),
        ("war_tie_bonus", "yes"),
        ("surrender_allowed", None),
    ],
)
def test_invalid_game_rule_is_refused_naming_its_field(field: str, value: Any) -> None:
    with pytest.raises(InvalidRules) as refused:
        GameRules(**{field: value})
    assert refused.value.field == field
    assert str(refused.value).startswith(f"{field}: ")
    assert refused.value.code == "validation_error"


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("currency", "usd"),
        ("currency", "EURO"),
        ("bet_unit", 0),
        ("bet_unit", 101),
        ("min_bet", 50),
        ("min_bet", 150),
        ("max_bet", 50),
        ("max_tie_bet", -100),
        ("max_tie_bet", 150),
    ],
)
def test_invalid_table_rule_is_refused_naming_its_field(field: str, value: Any) -> None:
    with pytest.raises(InvalidRules) as refused:
        TableRules(**{field: value})
    assert refused.value.field == field


def test_rules_round_trip_through_their_flat_form() -> None:
    table = TableRules(game=GameRules(decks=2, war_tie_bonus=True), currency="EUR")
    assert TableRules.from_dict(table.as_dict()) == table


def test_unknown_rule_in_a_flat_form_is_refused_by_name() -> None:
    with pytest.raises(InvalidRules) as refused:
        TableRules.from_dict({"decks": 6, "colour": "red"})
    assert refused.value.field == "colour"


@pytest.mark.parametrize(
    ("bet", "tie_bet", "error"),
    [
        (0, 0, BetOutOfRange),
        (100_100, 0, BetOutOfRange),
        (100, 10_100, BetOutOfRange),
        (150, 0, BetNotMultipleOfUnit),
        (200, 50, BetNotMultipleOfUnit),
    ],
)
def test_table_refuses_a_wager_outside_its_limits(
    bet: int, tie_bet: int, error: type[Exception]
) -> None:
    with pytest.raises(error):
        TableRules().check_wager(bet, tie_bet)


def test_table_accepts_a_wager_at_its_limits() -> None:
    TableRules().check_wager(100_000, 10_000)
    TableRules().check_wager(100, 0)
