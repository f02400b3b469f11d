"""Playing a game through from its set-up: the simulator's loop, and the auditor's replay.

A game replays from its seeds and the human seats' inputs alone; `verify` re-derives the
log and names the first turn that differs from the one recorded.
"""

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from casino.war.engine import play_turn, start
from casino.war.log import record_to_dict
from casino.war.state import GameState, TurnInput, TurnRecord, WarGame


def play_through(
    game: WarGame, inputs: Iterable[TurnInput] = ()
) -> tuple[GameState, tuple[TurnRecord, ...]]:
    """Play the given turns' inputs in order, then (for seats that need none) on to the end.

    A game with human seats stops when their inputs run out: what a human would do next is
    not for a replay to guess.
    """
    state = start(game)
    records: list[TurnRecord] = []
    pending = iter(inputs)
    while state.end is None:
        given = next(pending, None)
        if given is None:
            if not game.deterministic:
                break
            given = TurnInput()
        state, record = play_turn(game, state, given)
        records.append(record)
    return state, tuple(records)


@dataclass(frozen=True, slots=True)
class Verdict:
    """A replay against the recorded log: `first_difference` is the first turn (1-based)
    whose re-derived record differs, or None when every turn matches."""

    turns: int
    first_difference: int | None
    replayed: tuple[TurnRecord, ...]

    @property
    def matches(self) -> bool:
        return self.first_difference is None


def verify(
    game: WarGame, inputs: Sequence[TurnInput], recorded: Sequence[dict[str, Any]]
) -> Verdict:
    """Re-derive `len(recorded)` turns from the seeds and the inputs; compare turn by turn."""
    state = start(game)
    replayed: list[TurnRecord] = []
    for index, expected in enumerate(recorded):
        given = inputs[index] if index < len(inputs) else TurnInput()
        if state.end is not None:
            return Verdict(len(recorded), index + 1, tuple(replayed))
        state, record = play_turn(game, state, given)
        replayed.append(record)
        if record_to_dict(record) != expected:
            return Verdict(len(recorded), index + 1, tuple(replayed))
    return Verdict(len(recorded), None, tuple(replayed))
