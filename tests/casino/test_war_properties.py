"""Invariants of every War variant, over many deals: cards are conserved, games end, and a
game replays exactly from its seeds, even when resumed from its stored state."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from casino.errors import InvalidChoice
from casino.fairness import HandSeeds, RandomStream
from casino.war.engine import play_turn, start
from casino.war.log import (
    input_from_dict,
    input_to_dict,
    record_to_dict,
    state_from_dict,
    state_to_dict,
)
from casino.war.replay import play_through, verify
from casino.war.rules import VARIANTS, WarRules, variant_rules
from casino.war.simulate import default_seats
from casino.war.state import CHOICES, TurnInput, WarGame, check_choice

TWO_PLAYER_ONLY = {"tod_und_leben"}


@st.composite
def games(draw: st.DrawFn) -> WarGame:
    name = draw(st.sampled_from(sorted(VARIANTS)))
    players = 2 if name in TWO_PLAYER_ONLY else draw(st.integers(2, 4))
    rules = variant_rules(name, players, {"max_turns": 400})
    allowed = [c for c in CHOICES if _allowed(rules, c)]
    seats = tuple(draw(st.sampled_from(allowed)) for _ in range(players))
    nonce = draw(st.integers(0, 2**20))
    return WarGame(rules, seats, HandSeeds("a7" * 32, "props", nonce))


def _allowed(rules: WarRules, choice: str) -> bool:
    try:
        check_choice(rules, choice, "seat")
    except InvalidChoice:
        return False
    return True


@settings(max_examples=60, deadline=None)
@given(games())
def test_every_turn_conserves_the_cards(war: WarGame) -> None:
    state = start(war)
    total = war.rules.deck_size
    while state.end is None:
        state, _ = play_turn(war, state, TurnInput())
        assert state.card_count == total


@settings(max_examples=60, deadline=None)
@given(games())
def test_every_game_ends_by_a_winner_a_draw_a_cycle_or_the_cap(war: WarGame) -> None:
    state, records = play_through(war)
    assert state.end is not None and state.turn <= war.rules.max_turns
    assert records[-1].end == state.end


@settings(max_examples=40, deadline=None)
@given(games())
def test_a_game_replays_exactly_from_its_seeds(war: WarGame) -> None:
    _, records = play_through(war)
    verdict = verify(war, [], [record_to_dict(r) for r in records])
    assert verdict.matches


@settings(max_examples=40, deadline=None)
@given(games(), st.integers(1, 50))
def test_a_game_resumed_from_its_stored_state_plays_on_identically(
    war: WarGame, pause: int
) -> None:
    _, straight = play_through(war)
    state = start(war)
    resumed = []
    while state.end is None:
        if state.turn == pause:
            state = state_from_dict(state_to_dict(state))
        state, record = play_turn(war, state, TurnInput())
        resumed.append(record)
    assert tuple(resumed) == straight


def test_a_tampered_log_is_caught_at_the_turn_that_differs() -> None:
    war = WarGame(variant_rules("classic"), ("top", "top"), HandSeeds("a7" * 32, "t", 3))
    _, records = play_through(war)
    logged = [record_to_dict(r) for r in records]
    logged[4]["winner"] = 1 - logged[4]["winner"]
    assert verify(war, [], logged).first_difference == 5


def test_a_turn_input_survives_its_stored_form() -> None:
    given_input = TurnInput({2: "bottom", 0: "crazy"}, "random")
    assert input_from_dict(input_to_dict(given_input)) == given_input


def test_a_resumed_stream_continues_where_it_stopped() -> None:
    seeds = HandSeeds("a7" * 32, "t", 9)
    stream = RandomStream(seeds)
    for _ in range(13):
        stream.next_u32()
    resumed = RandomStream.resumed(seeds, 13)
    assert [resumed.next_u32() for _ in range(20)] == [stream.next_u32() for _ in range(20)]


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_each_variant_conserves_cards_ends_and_replays(variant: str) -> None:
    rules = variant_rules(variant, None, {"max_turns": 2_000})
    seats = default_seats(rules)
    for nonce in range(5):
        war = WarGame(rules, seats, HandSeeds("a7" * 32, variant, nonce))
        state = start(war)
        records = []
        while state.end is None:
            state, record = play_turn(war, state, TurnInput())
            assert state.card_count == rules.deck_size
            records.append(record)
        assert verify(war, [], [record_to_dict(r) for r in records]).matches
