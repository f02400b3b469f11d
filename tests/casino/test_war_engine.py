"""The War family's one game loop, a rule at a time, on piles arranged by hand."""

import pytest

from casino.errors import InvalidChoice, WarGameOver
from casino.fairness import RandomStream, draw_cards
from casino.war.deck import ordered_deck
from casino.war.engine import play_turn, start
from casino.war.state import Play, TurnInput
from tests.casino.war_support import SEEDS, arranged, game, one_turn


def test_the_deal_is_the_fairness_shuffle_dealt_round_the_table() -> None:
    war = game("classic")
    shuffled = draw_cards(SEEDS, ordered_deck(war.rules), 52)
    state = start(war)
    assert state.draw == (shuffled[0::2], shuffled[1::2])


def test_the_deal_records_how_much_of_the_stream_it_read() -> None:
    state = start(game("classic"))
    stream = RandomStream(SEEDS)
    for n in range(52, 0, -1):
        stream.below(n)
    assert state.position == stream.consumed


def test_three_players_share_52_cards_with_one_more_for_the_first() -> None:
    state = start(game("classic", players=3))
    assert [len(pile) for pile in state.draw] == [18, 17, 17]


def test_an_even_deal_removes_the_lowest_cards() -> None:
    state = start(game("classic", players=3, uneven_deal="remove_lowest"))
    dealt = [card for pile in state.draw for card in pile]
    assert len(dealt) == 51 and "2C" not in dealt


def test_tod_und_leben_deals_death_the_black_cards_and_life_the_red() -> None:
    state = start(game("tod_und_leben"))
    assert {card[-1] for card in state.draw[0]} == {"C", "S"}
    assert {card[-1] for card in state.draw[1]} == {"D", "H"}


def test_the_higher_card_takes_both_to_the_bottom_of_its_packet() -> None:
    state, record = one_turn(game(), arranged("AS 2C", "KD 3C"))
    assert record.winner == 0
    assert state.draw == (("2C", "AS", "KD"), ("3C",))


def test_a_tie_is_a_war_of_one_card_down_and_one_up() -> None:
    state, record = one_turn(game(), arranged("7S 2C 9H 4C", "7D 3C 5H 6C"))
    assert (record.wars, record.winner) == (1, 0)
    assert state.draw == (("4C", "7S", "7D", "2C", "9H", "3C", "5H"), ("6C",))
    assert Play(0, "2C", face_up=False) in record.plays


def test_three_cards_down_when_the_rules_say_so() -> None:
    state, record = one_turn(game(face_down=3), arranged("7S 2C 3C 4C 5H 8C", "7D 2D 3D 4D 9H 8D"))
    assert (record.wars, record.winner) == (1, 1)
    assert len(state.draw[1]) == 11


def test_a_war_that_ties_again_goes_on() -> None:
    _, record = one_turn(game(), arranged("7S 2C 9H 3S KS", "7D 3C 9D 4D 2S"))
    assert (record.wars, record.winner) == (2, 0)


def test_running_short_in_a_war_loses_by_default() -> None:
    state, record = one_turn(game(), arranged("7S 2C 9H", "7D"))
    assert record.winner == 0 and state.end is not None
    assert (state.end.reason, state.end.winner) == ("winner", 0)


def test_with_last_card_up_a_short_player_fights_with_its_last_card() -> None:
    _, record = one_turn(game(short_war="last_card_up"), arranged("7S 2C 3H", "7D KD"))
    assert record.winner == 1


def test_both_running_out_tied_is_a_draw() -> None:
    state, _ = one_turn(game(short_war="last_card_up"), arranged("7S", "7D"))
    assert state.end is not None and state.end.reason == "draw"


def test_in_a_three_player_war_only_the_tied_players_fight_by_default() -> None:
    _, record = one_turn(game(players=3), arranged("7S 2C 3H", "7D 4C 5H", "2D AC AH"))
    assert record.winner == 1
    assert [play.seat for play in record.plays if not play.face_up] == [0, 1]


def test_all_players_fight_the_war_when_the_rules_say_so() -> None:
    _, record = one_turn(
        game(players=3, war_participants="all"), arranged("7S 2C 3H", "7D 4C 5H", "2D AC AH")
    )
    assert record.winner == 2


def test_in_pyanitsa_the_six_beats_the_ace() -> None:
    _, record = one_turn(game("pyanitsa"), arranged("6S", "AD"))
    assert record.winner == 0


def test_in_pyanitsa_the_six_is_still_the_lowest_against_anything_but_an_ace() -> None:
    _, record = one_turn(game("pyanitsa"), arranged("6S 7S", "7D 8D"))
    assert record.winner == 1


def test_a_joker_beats_an_ace() -> None:
    _, record = one_turn(game("jokers"), arranged("JK 2C", "AS 3C"))
    assert record.winner == 0


def test_with_the_ace_low_a_two_beats_an_ace() -> None:
    _, record = one_turn(game("ace_low"), arranged("2C", "AS"))
    assert record.winner == 0


def test_in_razboi_a_war_on_fours_lays_three_down_and_the_fourth_up() -> None:
    _, record = one_turn(game("razboi"), arranged("4S 2C 3C 5C KC", "4D 2D 3D 5D QD"))
    assert [play.card for play in record.plays if not play.face_up] == [
        "2C", "3C", "5C", "2D", "3D", "5D",
    ]  # fmt: skip
    assert record.winner == 0


def test_razboi_pictures_count_ten_unless_the_rules_count_their_rank() -> None:
    tens = game("razboi")
    ranks = game("razboi", picture_war_size="rank")
    piles = arranged(" ".join(["JS"] + ["2C"] * 13), " ".join(["JD"] + ["3C"] * 13))
    _, by_ten = one_turn(tens, piles)
    _, by_rank = one_turn(ranks, piles)
    assert sum(not p.face_up for p in by_ten.plays) == 2 * 9
    assert sum(not p.face_up for p in by_rank.plays) == 2 * 10


def test_a_human_may_play_the_bottom_card_in_online_war() -> None:
    war = game("online", players=2, seats=("human", "top"))
    _, record = play_turn(war, arranged("2C AS", "KD 3C"), TurnInput({0: "bottom"}))
    assert record.plays[0] == Play(0, "AS", face_up=True) and record.winner == 0


def test_a_random_card_comes_from_the_games_stream() -> None:
    war = game("online", players=2, seats=("random", "top"))
    first, _ = one_turn(war, arranged("2C 3C 4C 5C", "KD"))
    again, _ = one_turn(war, arranged("2C 3C 4C 5C", "KD"))
    assert first == again and first.position > 0


def test_won_cards_become_the_draw_deck_sorted_as_the_human_asks() -> None:
    war = game("online", players=2, seats=("human", "top"))
    state = arranged("", "KD", won=("2C 9C 5C", ""))
    after, record = play_turn(war, state, TurnInput(sort="high_to_low"))
    assert record.recycled == ((0, "high_to_low"),)
    assert record.plays[0].card == "9C"
    assert after.draw[0] == ("5C", "2C")


def test_a_thief_takes_the_pile_its_card_matches_and_plays_its_next_card() -> None:
    war = game("steal", seats=("steal", "steal"))
    state = arranged("9S KS", "4D", won=("", "2C 9D"))
    after, record = one_turn(war, state)
    assert record.steals[0].thief == 0 and record.steals[0].cards == 2
    assert record.winner == 0
    assert after.won == (("2C", "9D", "9S", "KS", "4D"), ())


def test_a_player_who_declines_to_steal_just_plays() -> None:
    war = game("steal", seats=("top", "steal"))
    _, record = one_turn(war, arranged("9S KS", "4D", won=("", "2C 9D")))
    assert record.steals == () and record.winner == 0


def test_crazy_mode_needs_a_majority_vote() -> None:
    war = game("online", players=2, seats=("crazy", "top"), crazy_likelihood=100)
    _, record = one_turn(war, arranged("2C 3C", "KD 4D"))
    assert record.event is None


def test_a_unanimous_crazy_vote_at_full_likelihood_draws_an_event() -> None:
    war = game("online", players=2, seats=("crazy", "crazy"), crazy_likelihood=100)
    _, record = one_turn(war, arranged("2C 3C", "KD 4D"))
    assert record.event is not None


def test_a_game_ends_when_one_player_holds_every_card() -> None:
    state, record = one_turn(game(), arranged("AS", "2C"))
    assert state.end is not None and (state.end.reason, state.end.winner) == ("winner", 0)
    assert record.out == (1,)


def test_the_turn_cap_ends_a_game_as_capped() -> None:
    war = game(max_turns=3)
    state = start(war)
    while state.end is None:
        state, _ = one_turn(war, state)
    assert (state.turn, state.end.reason) == (3, "cap")


def test_a_finished_game_refuses_another_turn() -> None:
    state, _ = one_turn(game(), arranged("AS", "2C"))
    with pytest.raises(WarGameOver):
        one_turn(game(), state)


def test_input_for_a_seat_that_is_not_human_is_refused() -> None:
    with pytest.raises(InvalidChoice):
        play_turn(game(), start(game()), TurnInput({0: "top"}))


def test_a_choice_the_rules_give_no_meaning_is_refused() -> None:
    war = game(seats=("human", "top"))
    with pytest.raises(InvalidChoice):
        play_turn(war, start(war), TurnInput({0: "crazy"}))
