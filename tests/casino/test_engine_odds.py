"""Exact odds: the published six-deck figures, and how they move with the rules."""

from fractions import Fraction

import pytest

from casino.odds import decimal_text, exact_odds, published_odds
from casino.rules import GameRules, TableRules


def test_six_decks_match_the_published_house_edges() -> None:
    odds = exact_odds(GameRules(decks=6))
    assert round(float(odds.house_edge_war), 6) == 0.028771
    assert round(float(odds.house_edge_surrender), 6) == 0.036977
    assert round(float(odds.house_edge_tie_bet), 6) == 0.186495


def test_six_decks_with_the_war_tie_bonus_match_the_published_edge() -> None:
    assert round(float(exact_odds(GameRules(war_tie_bonus=True)).house_edge_war), 4) == 0.0233


def test_one_deck_ties_with_three_chances_in_fifty_one() -> None:
    assert exact_odds(GameRules(decks=1)).p_tie == Fraction(3, 51)


def test_p_tie_grows_with_the_number_of_decks_towards_one_in_thirteen() -> None:
    """Fewer decks remove a larger share of the first card's rank, so ties get rarer."""
    ties = [exact_odds(GameRules(decks=decks)).p_tie for decks in range(1, 9)]
    assert ties == sorted(ties)
    assert len(set(ties)) == len(ties)
    assert ties[-1] < Fraction(1, 13)


def test_every_house_edge_grows_with_the_number_of_decks() -> None:
    edges = [exact_odds(GameRules(decks=decks)) for decks in range(1, 9)]
    for name in ("house_edge_war", "house_edge_surrender"):
        values = [getattr(odds, name) for odds in edges]
        assert values == sorted(values), name
    tie_bet = [odds.house_edge_tie_bet for odds in edges]
    assert tie_bet == sorted(tie_bet, reverse=True)


@pytest.mark.parametrize("decks", range(1, 9))
def test_edges_relate_to_p_tie_as_rules_md_implies(decks: int) -> None:
    odds = exact_odds(GameRules(decks=decks))
    assert odds.house_edge_surrender == odds.p_tie / 2
    assert odds.house_edge_tie_bet == 1 - 11 * odds.p_tie
    assert odds.element_of_risk_war == odds.house_edge_war / (1 + odds.p_tie)
    assert 0 < odds.house_edge_war < odds.house_edge_surrender
    assert 0 < odds.p_war_tie < Fraction(1, 13)


def test_jokers_count_as_a_fourteenth_rank() -> None:
    odds = exact_odds(GameRules(decks=1, jokers_per_deck=2))
    same_rank_pairs = 13 * 4 * 3 + 2 * 1
    assert odds.p_tie == Fraction(same_rank_pairs, 54 * 53)


def test_one_joker_per_deck_in_one_deck_cannot_tie_as_a_joker_pair() -> None:
    odds = exact_odds(GameRules(decks=1, jokers_per_deck=1))
    assert odds.p_tie == Fraction(13 * 4 * 3, 53 * 52)
    assert odds.house_edge_war > 0


def test_jokers_make_ties_rarer_and_the_tie_bet_worse() -> None:
    plain = exact_odds(GameRules())
    jokers = exact_odds(GameRules(jokers_per_deck=2))
    assert jokers.p_tie < plain.p_tie
    assert jokers.house_edge_tie_bet > plain.house_edge_tie_bet


def test_ace_low_and_burn_cards_do_not_change_the_odds() -> None:
    base = exact_odds(GameRules())
    assert exact_odds(GameRules(ace_low=True)) == base
    assert all(exact_odds(GameRules(burn_cards=burn)) == base for burn in range(6))


def test_tie_payout_moves_only_the_tie_bet() -> None:
    base, eight = exact_odds(GameRules()), exact_odds(GameRules(tie_payout=8))
    assert eight.house_edge_war == base.house_edge_war
    assert eight.house_edge_tie_bet == 1 - 9 * base.p_tie


def test_odds_as_floats_name_every_quantity() -> None:
    floats = exact_odds(GameRules()).as_floats()
    assert set(floats) == {
        "p_tie",
        "p_war_tie",
        "house_edge_war",
        "house_edge_surrender",
        "house_edge_tie_bet",
        "element_of_risk_war",
    }
    assert all(isinstance(value, float) for value in floats.values())


def test_published_odds_round_half_to_even_to_six_places_without_a_float() -> None:
    assert decimal_text(Fraction(1, 3)) == "0.333333"
    assert decimal_text(Fraction(-1, 8), places=2) == "-0.12"
    assert decimal_text(Fraction(5, 1_000_000_0)) == "0.000000"
    assert decimal_text(Fraction(15, 1_000_000_0)) == "0.000002"


def test_the_default_table_publishes_the_six_deck_edges_and_rtp() -> None:
    odds = published_odds(TableRules())
    assert decimal_text(odds.war) == "0.028771"
    assert decimal_text(odds.rtp) == "0.971229"
    assert odds.player_advantage == ()


def test_a_tie_bet_paying_too_much_gives_the_player_the_edge() -> None:
    odds = published_odds(TableRules(game=GameRules(tie_payout=20)))
    assert odds.player_advantage == ("tie_bet",)


def test_a_bet_the_table_does_not_offer_publishes_no_edge() -> None:
    rules = TableRules(game=GameRules(surrender_allowed=False), max_tie_bet=0)
    odds = published_odds(rules)
    assert (odds.surrender, odds.tie_bet) == (None, None)
