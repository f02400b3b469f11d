"""Exact odds for a rule set, by card removal, as fractions.

Each hand is dealt from a freshly shuffled full shoe, so one hand's odds are exact from the
rank counts alone. Burned cards are a uniformly random subset of the rest of the shoe, so by
exchangeability the two war cards are distributed as two cards drawn from the shoe less the
tied pair: burn cards change nothing in expectation. Ace-low only relabels ranks.
"""

from dataclasses import dataclass
from fractions import Fraction

from casino.rules import GameRules
from casino.shoe import rank_counts


@dataclass(frozen=True, slots=True)
class Odds:
    """House edges are per initial main bet (or per tie bet), as fractions of one unit."""

    p_tie: Fraction
    p_war_tie: Fraction
    house_edge_war: Fraction
    house_edge_surrender: Fraction
    house_edge_tie_bet: Fraction
    element_of_risk_war: Fraction

    def as_floats(self) -> dict[str, float]:
        return {name: float(getattr(self, name)) for name in self.__dataclass_fields__}


def _pair_probability(counts: list[int]) -> Fraction:
    """Probability that two cards drawn without replacement share a rank."""
    total = sum(counts)
    same = sum(count * (count - 1) for count in counts)
    return Fraction(same, total * (total - 1))


def exact_odds(rules: GameRules) -> Odds:
    counts = list(rank_counts(rules.decks, rules.jokers_per_deck).values())
    total = sum(counts)
    p_tie = _pair_probability(counts)

    # War outcomes, averaged over which rank tied (weight: that rank's share of the ties).
    expected_war = Fraction(0)
    p_war_tie = Fraction(0)
    for index, count in enumerate(counts):
        if count < 2:
            continue
        weight = Fraction(count * (count - 1), total * (total - 1)) / p_tie
        remaining = [c - 2 if i == index else c for i, c in enumerate(counts)]
        war_tie = _pair_probability(remaining)
        war_win = war_loss = (1 - war_tie) / 2  # by symmetry between player and dealer
        tie_pays = 2 if rules.war_tie_bonus else 1
        expected_war += weight * (war_win + tie_pays * war_tie - 2 * war_loss)
        p_war_tie += weight * war_tie

    # Player and dealer win the first deal equally often, so only ties move the edge.
    house_edge_war = -p_tie * expected_war
    house_edge_surrender = p_tie / 2
    house_edge_tie_bet = 1 - p_tie * (rules.tie_payout + 1)
    return Odds(
        p_tie=p_tie,
        p_war_tie=p_war_tie,
        house_edge_war=house_edge_war,
        house_edge_surrender=house_edge_surrender,
        house_edge_tie_bet=house_edge_tie_bet,
        element_of_risk_war=house_edge_war / (1 + p_tie),
    )
