"""Many War games with fixed policies, summarised: how long games last, how often wars
and cycles happen, how often each seat wins.

Game `i` is dealt from the run's seed pair with nonce `i`, through the very engine that
plays the API's games, so any figure can be re-derived game by game. Time is the caller's
business (cards per second is measured by the command line): this module stays pure.
"""

import math
from collections.abc import Callable
from dataclasses import dataclass
from statistics import mean, median

from casino.fairness import HandSeeds, new_client_seed, new_server_seed
from casino.war.engine import play_turn, start
from casino.war.rules import WarRules
from casino.war.state import Policy, TurnInput, WarGame

ProgressCallback = Callable[[int], None]


def default_seats(rules: WarRules) -> tuple[Policy, ...]:
    """The policy a simulated seat follows: play the top card, and steal whenever it can."""
    policy: Policy = "steal" if rules.steal else "top"
    return (policy,) * rules.players


@dataclass(frozen=True, slots=True)
class WarSimulation:
    rules: WarRules
    seats: tuple[Policy, ...]
    server_seed: str
    client_seed: str
    turns: tuple[int, ...]
    wars: int
    wins: tuple[int, ...]
    draws: int
    cycles: int
    capped: int
    cards_played: int

    @property
    def games(self) -> int:
        return len(self.turns)

    @property
    def mean_turns(self) -> float:
        return mean(self.turns)

    @property
    def median_turns(self) -> float:
        return median(self.turns)

    @property
    def p95_turns(self) -> int:
        """Nearest-rank 95th percentile: a turn count, as a game has."""
        ordered = sorted(self.turns)
        return ordered[math.ceil(0.95 * len(ordered)) - 1]

    @property
    def wars_per_game(self) -> float:
        return self.wars / self.games

    @property
    def wars_per_turn(self) -> float:
        return self.wars / sum(self.turns)

    @property
    def win_shares(self) -> tuple[float, ...]:
        return tuple(wins / self.games for wins in self.wins)


def simulate_war(
    rules: WarRules,
    games: int,
    *,
    seats: tuple[Policy, ...] | None = None,
    server_seed: str | None = None,
    client_seed: str | None = None,
    progress: ProgressCallback | None = None,
) -> WarSimulation:
    """Play `games` games to their end; `progress(n)` after every game."""
    if games < 1:
        raise ValueError("games must be at least 1")
    seats = seats or default_seats(rules)
    server_seed = server_seed or new_server_seed()
    client_seed = client_seed or new_client_seed()
    turns: list[int] = []
    wins = [0] * rules.players
    wars = draws = cycles = capped = cards = 0
    for nonce in range(games):
        game = WarGame(rules, seats, HandSeeds(server_seed, client_seed, nonce))
        state = start(game)
        while state.end is None:
            state, record = play_turn(game, state, TurnInput())
            wars += record.wars
            cards += len(record.plays)
        turns.append(state.turn)
        reason, winner = state.end.reason, state.end.winner
        if winner is not None:
            wins[winner] += 1
        draws += reason == "draw"
        cycles += reason == "cycle"
        capped += reason == "cap"
        if progress is not None:
            progress(nonce + 1)
    return WarSimulation(
        rules=rules,
        seats=seats,
        server_seed=server_seed,
        client_seed=client_seed,
        turns=tuple(turns),
        wars=wars,
        wins=tuple(wins),
        draws=draws,
        cycles=cycles,
        capped=capped,
        cards_played=cards,
    )
