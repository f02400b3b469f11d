"""How far a hold may stray from the theoretical by chance: its standard error and 95%
interval, from the exact variance of the bets actually made (Maryland COMAR 36.05.03.25
asks operators to flag a hold outside such an interval)."""

import math
from dataclasses import dataclass
from fractions import Fraction
from statistics import NormalDist
from typing import Final

Z_95: Final = NormalDist().inv_cdf(0.975)


@dataclass(frozen=True, slots=True)
class HoldSpread:
    std_error: float
    low: float
    high: float
    outside: bool


def hold_spread(
    handle: int, house_win: int, theoretical_win: Fraction, variance: Fraction
) -> HoldSpread | None:
    """The interval the hold falls in 95% of the time if the game is as published (normal
    approximation around the theoretical hold); None when nothing was staked."""
    if not handle:
        return None
    std_error = math.sqrt(variance) / handle
    expected = float(theoretical_win / handle)
    low, high = expected - Z_95 * std_error, expected + Z_95 * std_error
    hold = house_win / handle
    return HoldSpread(std_error, low, high, not low <= hold <= high)
