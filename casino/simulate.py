"""Monte Carlo play of many hands with the real engine and the real fairness stream.

The simulation is the empirical counterpart of `casino.odds`: it deals hand `i` from the
seed pair with nonce `i`, through the very `deal` and `decide` that serve players, so a
disagreement with the exact edges points at the engine, the stream or the odds. It streams:
only integer sums are kept (exact, so no float drift however many hands), and a callback
reports progress for a progress bar.
"""

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from fractions import Fraction
from statistics import NormalDist
from types import MappingProxyType
from typing import Final

from casino.fairness import (
    HandSeeds,
    new_client_seed,
    new_server_seed,
    server_seed_bytes,
    validate_client_seed,
)
from casino.hand import Action, Outcome, check_action, check_wager, deal, decide
from casino.rules import GameRules

CONFIDENCE: Final = 0.95
_Z: Final = NormalDist().inv_cdf(0.5 + CONFIDENCE / 2)
DEFAULT_PROGRESS_EVERY: Final = 10_000

ProgressCallback = Callable[[int], None]


@dataclass(frozen=True, slots=True)
class Estimate:
    """A sample house edge with its 95% confidence interval (normal approximation).

    The edge is the house's mean gain per unit staked, so it is comparable with `Odds`.
    """

    edge: float
    standard_error: float

    @classmethod
    def from_sums(cls, count: int, total: int, total_squares: int, unit: int) -> "Estimate":
        """From the sums of the player's per-hand nets and their squares, in units of `unit`.

        The variance is computed from the exact integer sums (no cancellation), then scaled.
        """
        if count < 2:
            raise ValueError("a confidence interval needs at least two hands")
        mean = Fraction(total, count * unit)
        variance = Fraction(count * total_squares - total * total, count * (count - 1) * unit**2)
        return cls(edge=float(-mean), standard_error=math.sqrt(variance / count))

    @property
    def half_width(self) -> float:
        return _Z * self.standard_error

    @property
    def low(self) -> float:
        return self.edge - self.half_width

    @property
    def high(self) -> float:
        return self.edge + self.half_width

    def contains(self, value: float | Fraction) -> bool:
        """Whether `value` (say an exact edge) lies inside the 95% interval."""
        return self.low <= value <= self.high


@dataclass(frozen=True, slots=True)
class SimulationResult:
    """What a run of `hands` hands produced, with the seeds that reproduce it exactly.

    `main` is the house edge per initial main bet under `strategy`; `tie` is the house edge
    per unit of tie bet (computed from the first deals even when no tie bet was placed).
    `main_net` and `tie_net` are the player's total nets in minor units.
    """

    rules: GameRules
    strategy: Action
    hands: int
    bet: int
    tie_bet: int
    server_seed: str
    client_seed: str
    outcomes: Mapping[Outcome, int]
    first_deal_ties: int
    main_net: int
    tie_net: int
    main: Estimate
    tie: Estimate

    @property
    def net(self) -> int:
        return self.main_net + self.tie_net


def simulate(
    hands: int,
    *,
    rules: GameRules | None = None,
    strategy: Action = Action.WAR,
    bet: int = 100,
    tie_bet: int = 0,
    server_seed: str | None = None,
    client_seed: str | None = None,
    progress: ProgressCallback | None = None,
    progress_every: int = DEFAULT_PROGRESS_EVERY,
) -> SimulationResult:
    """Play nonces 0 .. hands-1 of one seed pair (fresh seeds when none are given).

    `progress(done)` is called after every `progress_every` hands and once at the end.
    """
    rules = GameRules() if rules is None else rules
    strategy = Action(strategy)
    if hands < 2:
        raise ValueError(f"hands must be at least 2, got {hands}")
    if progress_every < 1:
        raise ValueError(f"progress_every must be at least 1, got {progress_every}")
    # Checked before the first hand: a refused surrender would otherwise surface only at the
    # first tie, if one comes at all.
    check_wager(bet, tie_bet)
    check_action(rules, strategy)
    server_seed = new_server_seed() if server_seed is None else server_seed
    client_seed = new_client_seed() if client_seed is None else client_seed
    server_seed_bytes(server_seed)
    validate_client_seed(client_seed)

    sums = _play(
        rules, strategy, server_seed, client_seed, hands, bet, tie_bet, progress, progress_every
    )
    payout = rules.tie_payout
    ties = sums.first_deal_ties
    losses = hands - ties
    return SimulationResult(
        rules=rules,
        strategy=strategy,
        hands=hands,
        bet=bet,
        tie_bet=tie_bet,
        server_seed=server_seed,
        client_seed=client_seed,
        outcomes=MappingProxyType(sums.outcomes),
        first_deal_ties=ties,
        main_net=sums.main_net,
        tie_net=sums.tie_net,
        main=Estimate.from_sums(hands, sums.main_net, sums.main_squares, bet),
        # Per unit of tie bet a hand nets tie_payout on a first-deal tie and -1 otherwise.
        tie=Estimate.from_sums(hands, ties * payout - losses, ties * payout**2 + losses, 1),
    )


@dataclass(frozen=True, slots=True)
class _Sums:
    """What a run keeps of its hands: integer sums, exact however many hands were played."""

    outcomes: dict[Outcome, int]
    first_deal_ties: int
    main_net: int
    main_squares: int
    tie_net: int


def _play(
    rules: GameRules,
    strategy: Action,
    server_seed: str,
    client_seed: str,
    hands: int,
    bet: int,
    tie_bet: int,
    progress: ProgressCallback | None,
    progress_every: int,
) -> _Sums:
    """Deal nonces 0 .. hands-1, deciding every tie by `strategy`, and sum what they netted."""
    counts = dict.fromkeys(Outcome, 0)
    main_total = main_squares = tie_total = ties = 0
    done = 0
    while done < hands:
        stop = min(done + progress_every, hands)
        # The hot loop: locals only, one engine call per deal and per decision.
        for nonce in range(done, stop):
            hand = deal(rules, HandSeeds(server_seed, client_seed, nonce), bet, tie_bet)
            if hand.outcome is None:
                ties += 1
                hand = decide(hand, strategy)
            outcome = hand.outcome
            main_net = hand.main_net
            if outcome is None or main_net is None:  # pragma: no cover - decide settles
                raise AssertionError("a decided hand is settled")
            counts[outcome] += 1
            main_total += main_net
            main_squares += main_net * main_net
            tie_total += hand.tie_net
        done = stop
        if progress is not None:
            progress(done)
    return _Sums(counts, ties, main_total, main_squares, tie_total)
