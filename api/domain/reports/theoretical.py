"""Theoretical win: what the rules recorded with each hand say the house should win on it.

Bets are summed exactly per rule set and kind, then multiplied by the exact edges (fractions)
once per group; the odds of a rule set are computed once per process.
"""

import json
from collections.abc import Callable
from fractions import Fraction
from functools import cache

from casino.odds import Odds, WinVariance, exact_odds, win_variance
from casino.rules import GameRules, TableRules

BetsByRules = dict[str, list[int]]
"""Per recorded rules text (JSON): [main bets of every hand, main bets of the hands
surrendered, tie bets, squared main bets, squared tie bets, main x tie bets]. Mutable
lists: they are running sums over many hands."""
SUMS = 6


@cache
def _odds(game: GameRules) -> Odds:
    return exact_odds(game)


@cache
def odds_for_rules(rules: str) -> Odds:
    """Exact odds of a recorded rule set; cached per distinct rules text (and rule set)."""
    return _odds(TableRules.from_dict(json.loads(rules)).game)


def add_bets(into: BetsByRules, other: BetsByRules) -> None:
    """Add `other`'s sums to `into`'s, rule set by rule set."""
    for rules, sums in other.items():
        mine = into.setdefault(rules, [0] * SUMS)
        for index, value in enumerate(sums):
            mine[index] += value


def add_hand(into: BetsByRules, rules: str, bet: int, tie_bet: int, *, surrendered: bool) -> None:
    sums = into.get(rules)
    if sums is None:
        sums = into[rules] = [0] * SUMS
    sums[0] += bet
    if surrendered:
        sums[1] += bet
    sums[2] += tie_bet
    sums[3] += bet * bet
    sums[4] += tie_bet * tie_bet
    sums[5] += bet * tie_bet


def theoretical_win(bets: BetsByRules, odds: Callable[[str], Odds] = odds_for_rules) -> Fraction:
    """Expected house win, unbiased whatever the player's strategy on ties.

    Every main bet is rated at the always-war edge; a surrender (which happens only on a
    tie, with probability p_tie) adds (surrender edge - war edge) / p_tie of its bet, so
    that a player who always surrenders is rated at exactly the surrender edge.
    """
    total = Fraction(0)
    for rules, (main, surrendered, tie, *_) in bets.items():
        o = odds(rules)
        total += main * o.house_edge_war
        total += surrendered * (o.house_edge_surrender - o.house_edge_war) / o.p_tie
        total += tie * o.house_edge_tie_bet
    return total


@cache
def variance_for_rules(rules: str) -> WinVariance:
    return win_variance(TableRules.from_dict(json.loads(rules)).game)


def win_variance_of(
    bets: BetsByRules, variance: Callable[[str], WinVariance] = variance_for_rules
) -> Fraction:
    """The exact variance of the house win over the hands whose bets these are (hands are
    independent: each is dealt from a fresh shuffle), for the always-war player."""
    total = Fraction(0)
    for rules, (_, _, _, main_squares, tie_squares, products) in bets.items():
        v = variance(rules)
        total += main_squares * v.main + tie_squares * v.tie + 2 * products * v.covariance
    return total
