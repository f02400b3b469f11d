"""The hold's standard error and 95% interval, from the exact variance of the bets made."""

import json
import math
from datetime import date
from fractions import Fraction

from api.domain.reports.aggregate import SettledHand, aggregate
from api.domain.reports.spread import hold_spread
from casino.odds import win_variance
from casino.rules import GameRules, TableRules


def _hand(hand_id: int, net: int, bet: int = 100) -> SettledHand:
    staked = bet
    returned = bet + net
    return SettledHand(
        hand_id=hand_id,
        day=date(2026, 6, 10),
        table_id=1,
        player_id=1,
        currency="USD",
        rules=json.dumps(TableRules().as_dict()),
        bet=bet,
        tie_bet=0,
        raise_amount=0,
        total_staked=staked,
        total_returned=returned,
        net=net,
        outcome="player_win" if net > 0 else "dealer_win",
        ledger_staked=staked,
        ledger_returned=returned,
    )


def test_the_standard_error_is_the_square_root_of_the_bets_variance_over_the_handle() -> None:
    spread = hold_spread(400, 0, Fraction(0), Fraction(4 * 100**2))
    assert spread is not None
    assert math.isclose(spread.std_error, 200 / 400)


def test_a_hold_far_outside_what_chance_allows_is_flagged() -> None:
    hands = [_hand(n, -100) for n in range(400)]  # the house wins every hand
    (row,) = aggregate(hands, "day").rows
    assert row.hold == 1.0 and row.outside_interval is True
    assert row.hold_interval_95 is not None and row.hold_interval_95[1] < 0.2


def test_an_even_split_is_inside_the_interval() -> None:
    hands = [_hand(n, -100 if n % 2 else 100) for n in range(400)]
    (row,) = aggregate(hands, "day").rows
    assert row.outside_interval is False


def test_nothing_staked_has_no_spread() -> None:
    assert hold_spread(0, 0, Fraction(0), Fraction(0)) is None


def test_the_exact_variance_matches_the_engines_hands() -> None:
    variance = win_variance(GameRules())
    assert math.isclose(float(variance.main), 1.10190, rel_tol=1e-4)
    assert math.isclose(float(variance.tie), 8.28676, rel_tol=1e-4)
