import pytest

from casino.errors import InvalidRules
from casino.war.deck import ordered_deck
from casino.war.rules import VARIANTS, WarRules, variant_rules


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_every_variant_is_a_valid_rule_set(name: str) -> None:
    assert isinstance(variant_rules(name), WarRules)


def test_classic_war_is_two_players_with_the_standard_pack_and_one_card_down() -> None:
    rules = variant_rules("classic")
    assert (rules.players, rules.face_down, len(ordered_deck(rules))) == (2, 1, 52)


def test_pyanitsa_uses_the_russian_36_card_pack_where_the_six_beats_the_ace() -> None:
    rules = variant_rules("pyanitsa")
    assert len(ordered_deck(rules)) == 36
    assert rules.ranks[0] == "6" and rules.lowest_beats_ace


def test_tod_und_leben_uses_the_32_card_pack_dealt_by_colour() -> None:
    rules = variant_rules("tod_und_leben")
    assert len(ordered_deck(rules)) == 32 and rules.deal == "by_colour"


def test_online_war_decks_have_1_to_20_cards_a_suit_and_1_to_6_suits() -> None:
    rules = variant_rules("online", None, {"cards_per_suit": 20, "suits": 6})
    assert len(ordered_deck(rules)) == 120
    assert "20R" in ordered_deck(rules)


def test_options_override_a_variant_and_command_line_text_is_converted() -> None:
    rules = variant_rules("classic", 3, {"face_down": "3", "ace_low": "true"})
    assert (rules.players, rules.face_down, rules.ace_low) == (3, 3, True)


def test_an_unknown_option_is_refused_naming_it() -> None:
    with pytest.raises(InvalidRules) as refused:
        variant_rules("classic", None, {"jokers": 2})
    assert refused.value.field == "jokers"


def test_an_option_value_outside_its_choices_is_refused() -> None:
    with pytest.raises(InvalidRules) as refused:
        variant_rules("classic", None, {"short_war": "surrender"})
    assert refused.value.field == "short_war"


def test_an_unknown_variant_is_refused() -> None:
    with pytest.raises(InvalidRules) as refused:
        variant_rules("snap")
    assert refused.value.field == "variant"


@pytest.mark.parametrize(
    ("variant", "options", "field"),
    [
        ("tod_und_leben", {"players": 3}, "deal"),
        ("classic", {"steal": True}, "steal"),
        ("classic", {"crazy_mode": True}, "crazy_mode"),
        ("pyanitsa", {"ace_low": True}, "lowest_beats_ace"),
        ("razboi", {"cards_per_suit": 8}, "war_size"),
        ("classic", {"players": 5}, "players"),
    ],
)
def test_combinations_no_text_describes_are_refused(
    variant: str, options: dict[str, object], field: str
) -> None:
    with pytest.raises(InvalidRules) as refused:
        variant_rules(variant, None, options)
    assert refused.value.field == field
