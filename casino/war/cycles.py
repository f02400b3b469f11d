"""Telling a War game that goes on for ever: Brent's cycle detection over stable digests."""

import hashlib
from dataclasses import replace

from casino.war.state import GameState


def state_digest(state: GameState) -> str:
    """A stable digest of what the next turn depends on (not Python's per-process hash,
    since a game's checkpoint is stored between requests)."""
    text = repr((state.draw, state.won, state.dead, state.position))
    return hashlib.blake2b(text.encode(), digest_size=16).hexdigest()


def brent_step(state: GameState) -> tuple[GameState, bool]:
    """Brent's algorithm, one step: a state equal to the checkpoint closes a cycle; the
    checkpoint moves to the current state at each power of two."""
    digest = state_digest(state)
    if digest == state.checkpoint:
        return state, True
    if state.since + 1 == state.power:
        return replace(state, checkpoint=digest, power=2 * state.power, since=0), False
    return replace(state, since=state.since + 1), False
