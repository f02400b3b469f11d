"""Theoretical win: what the rules recorded with each hand say the house should win on it.

Bets are summed exactly per rule set and kind, then multiplied by the exact edges (fractions)
once per group; the odds of a rule set are computed once per process.
"""

import json
from collections.abc import Callable
from fractions import Fraction
from functools import cache

from casino.odds import Odds, exact_odds
from casino.rules import GameRules, TableRules

BetsByRules = dict[str, list[int]]
"""Per recorded rules text (JSON): [main bets of every hand, main bets of the hands
surrendered, tie bets]. Mutable lists: they are running sums over many hands."""


@cache
def _odds(game: GameRules) -> Odds:
    return exact_odds(game)


@cache
def odds_for_rules(rules: str) -> Odds:
    """Exact odds of a recorded rule set; cached per distinct rules text (and rule set)."""
    return _odds(TableRules.from_dict(json.loads(rules)).game)


def add_bets(into: BetsByRules, other: BetsByRules) -> None:
    """Add `other`'s sums to `into`'s, rule set by rule set."""
    for rules, (main, surrendered, tie) in other.items():
        mine = into.setdefault(rules, [0, 0, 0])
        mine[0] += main
        mine[1] += surrendered
        mine[2] += tie


def theoretical_win(bets: BetsByRules, odds: Callable[[str], Odds] = odds_for_rules) -> Fraction:
    """Expected house win, unbiased whatever the player's strategy on ties.

    Every main bet is rated at the always-war edge; a surrender (which happens only on a
    tie, with probability p_tie) adds (surrender edge - war edge) / p_tie of its bet, so
    that a player who always surrenders is rated at exactly the surrender edge.
    """
    total = Fraction(0)
    for rules, (main, surrendered, tie) in bets.items():
        o = odds(rules)
        total += main * o.house_edge_war
        total += surrendered * (o.house_edge_surrender - o.house_edge_war) / o.p_tie
        total += tie * o.house_edge_tie_bet
    return total
