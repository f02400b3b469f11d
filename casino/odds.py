"""Exact odds for a rule set, by card removal, as fractions.

Each hand is dealt from a freshly shuffled full shoe, so one hand's odds are exact from the
rank counts alone. Burned cards are a uniformly random subset of the rest of the shoe, so by
exchangeability the two war cards are distributed as two cards drawn from the shoe less the
tied pair: burn cards change nothing in expectation. Ace-low only relabels ranks.
"""

from dataclasses import dataclass
from fractions import Fraction
from functools import cache
from typing import Final

from casino.rules import GameRules, TableRules
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


@cache
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


PUBLISHED_PLACES: Final = 6


@dataclass(frozen=True, slots=True)
class PublishedOdds:
    """What a table publishes to players: the house edge of each bet it offers and the
    return to player of the war strategy, exact fractions (rounded only for display).

    A bet the table does not offer (surrender where it is not allowed, the tie bet at a
    table whose maximum tie bet is 0) has no edge to publish: None.
    """

    war: Fraction
    surrender: Fraction | None
    tie_bet: Fraction | None

    @property
    def rtp(self) -> Fraction:
        return 1 - self.war

    @property
    def player_advantage(self) -> tuple[str, ...]:
        """The bets on which the player, not the house, has the edge."""
        edges = {"war": self.war, "surrender": self.surrender, "tie_bet": self.tie_bet}
        return tuple(name for name, edge in edges.items() if edge is not None and edge < 0)


def published_odds(rules: TableRules) -> PublishedOdds:
    odds = exact_odds(rules.game)
    return PublishedOdds(
        war=odds.house_edge_war,
        surrender=odds.house_edge_surrender if rules.game.surrender_allowed else None,
        tie_bet=odds.house_edge_tie_bet if rules.max_tie_bet else None,
    )


def decimal_text(value: Fraction, places: int = PUBLISHED_PLACES) -> str:
    """A fraction as a decimal string, rounded half to even: a display figure that never
    went through a float (`Fraction(1, 3)` -> `"0.333333"`)."""
    scaled = round(value * 10**places)
    sign = "-" if scaled < 0 else ""
    whole, fraction = divmod(abs(scaled), 10**places)
    return f"{sign}{whole}.{fraction:0{places}d}"


@dataclass(frozen=True, slots=True)
class WinVariance:
    """The variance of one hand's result per unit staked, exact, for the always-war player:
    per unit of main bet (the raise included), per unit of tie bet, and their covariance on
    the same hand (a tie bet wins exactly when the main bet goes to war). A hand with main
    bet b and tie bet t has variance b² main + t² tie + 2bt covariance.
    """

    main: Fraction
    tie: Fraction
    covariance: Fraction


@cache
def win_variance(rules: GameRules) -> WinVariance:
    counts = list(rank_counts(rules.decks, rules.jokers_per_deck).values())
    total = sum(counts)
    p_tie = _pair_probability(counts)
    tie_pays = 2 if rules.war_tie_bonus else 1
    war_mean = Fraction(0)  # the player's result per unit, given a first-deal tie
    war_square = Fraction(0)
    for index, count in enumerate(counts):
        if count < 2:
            continue
        weight = Fraction(count * (count - 1), total * (total - 1)) / p_tie
        remaining = [c - 2 if i == index else c for i, c in enumerate(counts)]
        war_tie = _pair_probability(remaining)
        decided = (1 - war_tie) / 2
        war_mean += weight * (decided * 1 + war_tie * tie_pays - decided * 2)
        war_square += weight * (decided * 1 + war_tie * tie_pays**2 + decided * 4)
    main_mean = p_tie * war_mean  # non-ties are +1 and -1 equally often
    main_square = (1 - p_tie) + p_tie * war_square
    tie_mean = p_tie * rules.tie_payout - (1 - p_tie)
    tie_square = p_tie * rules.tie_payout**2 + (1 - p_tie)
    # E[main x tie]: off a tie the tie bet loses 1 while the main bet's ±1 averages 0.
    both = p_tie * rules.tie_payout * war_mean
    return WinVariance(
        main=main_square - main_mean**2,
        tie=tie_square - tie_mean**2,
        covariance=both - main_mean * tie_mean,
    )
