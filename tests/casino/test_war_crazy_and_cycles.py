"""Crazy Mode's seven events, each found by searching the stream for a turn that draws
it, and the end of games that would go on for ever."""

from casino.fairness import HandSeeds
from casino.war.cycles import state_digest
from casino.war.engine import play_turn, start
from casino.war.replay import play_through
from casino.war.rules import variant_rules
from casino.war.simulate import simulate_war
from casino.war.state import GameState, TurnInput, TurnRecord, WarGame

Found = tuple[GameState, GameState, TurnRecord]


def _first_turn_with(event: str, plain: bool = True) -> Found:
    """The first turn of a search over deals that draws `event`; `plain` asks for a turn
    without a war or a recycled deck, whose effect is simplest to state."""
    rules = variant_rules("online", None, {"crazy_likelihood": 100})
    for nonce in range(2_000):
        war = WarGame(rules, ("crazy",) * 4, HandSeeds("c4" * 32, "crazy", nonce))
        state = start(war)
        for _ in range(60):
            if state.end is not None:
                break
            after, record = play_turn(war, state, TurnInput())
            if record.event == event and not (plain and (record.wars or record.recycled)):
                return state, after, record
            state = after
    raise AssertionError(f"no turn drew {event}")


def _face_up(record: TurnRecord) -> dict[int, str]:
    return {play.seat: play.card for play in record.plays if play.face_up}


def test_swapped_draw_decks_make_each_player_play_the_next_ones_top_card() -> None:
    before, _, record = _first_turn_with("swap_draw_decks")
    assert _face_up(record)[0] == before.draw[1][0]


def test_swapped_won_cards_hand_each_player_the_next_ones_won_pile() -> None:
    before, after, record = _first_turn_with("swap_won_cards")
    kept = after.won[0] if record.winner != 0 else after.won[0][: len(before.won[1])]
    assert kept == before.won[1]


def test_shuffled_draw_decks_read_the_stream_and_keep_each_players_cards() -> None:
    before, after, _ = _first_turn_with("shuffle_draw_decks")
    assert after.position >= before.position + sum(map(len, before.draw))


def test_when_everyone_loses_the_round_its_cards_leave_the_game() -> None:
    before, after, record = _first_turn_with("everyone_loses")
    assert record.winner is None
    assert len(after.dead) - len(before.dead) == len(record.plays)


def test_when_suit_wins_the_highest_suit_takes_the_round() -> None:
    _, _, record = _first_turn_with("suit_wins")
    cards = _face_up(record)
    assert record.winner == max(cards, key=lambda seat: ("CDHS".index(cards[seat][-1]), seat))


def test_when_lowest_wins_the_lowest_card_takes_the_round() -> None:
    _, _, record = _first_turn_with("lowest_wins")
    cards = _face_up(record)
    assert record.winner == min(cards, key=lambda seat: "23456789TJQKA".index(cards[seat][0]))


def test_a_random_player_losing_its_won_cards_puts_them_out_of_the_game() -> None:
    before, after, _ = _first_turn_with("random_player_loses_won_cards")
    lost = len(after.dead) - len(before.dead)
    assert lost > 0 or not any(before.won)
    assert after.card_count == before.card_count


def test_a_game_that_repeats_a_state_ends_as_a_draw_by_cycle() -> None:
    rules = variant_rules("classic")
    for nonce in range(200):
        war = WarGame(rules, ("top", "top"), HandSeeds("c4" * 32, "cycle", nonce))
        final, records = play_through(war)
        if final.end is not None and final.end.reason == "cycle":
            break
    else:
        raise AssertionError("no cycling game in 200 deals")
    seen = {state_digest(start(war))}
    state = start(war)
    repeated = False
    for _ in records:
        state, _record = play_turn(war, state, TurnInput())
        repeated = repeated or state_digest(state) in seen
        seen.add(state_digest(state))
    assert repeated and final.end.winner is None


def test_a_game_with_a_human_is_never_called_a_cycle() -> None:
    war = WarGame(
        variant_rules("classic", None, {"max_turns": 3000}),
        ("human", "top"),
        HandSeeds("c4" * 32, "cycle", 0),
    )
    state = start(war)
    while state.end is None:
        state, _ = play_turn(war, state, TurnInput())
    assert state.end.reason != "cycle"


def test_a_simulation_counts_every_game_once_and_replays_from_its_seeds() -> None:
    rules = variant_rules("classic", None, {"gather_order": "shuffled"})
    run = simulate_war(rules, 30, server_seed="c4" * 32, client_seed="sim")
    again = simulate_war(rules, 30, server_seed="c4" * 32, client_seed="sim")
    assert run == again
    assert sum(run.wins) + run.draws + run.cycles + run.capped == 30
    assert run.p95_turns >= run.median_turns and run.cards_played > 0
