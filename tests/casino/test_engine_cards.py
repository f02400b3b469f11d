"""Card ranking: suits never matter, a joker beats an ace, ace-low puts the ace under the 2."""

from itertools import pairwise

import pytest

from casino.cards import JOKER, RANKS, SUITS, compare
from casino.shoe import ordered_shoe, rank_counts


def test_ranks_ascend_from_two_to_ace() -> None:
    codes = [rank + "S" for rank in RANKS]
    for lower, higher in pairwise(codes):
        assert compare(higher, lower, ace_low=False) > 0
        assert compare(lower, higher, ace_low=False) < 0


def test_joker_ranks_above_the_ace() -> None:
    assert compare(JOKER, "AS", ace_low=False) > 0
    assert compare("AS", JOKER, ace_low=False) < 0


def test_joker_still_beats_everything_with_ace_low() -> None:
    assert compare(JOKER, "KS", ace_low=True) > 0
    assert compare(JOKER, "AS", ace_low=True) > 0


def test_ace_low_ranks_the_ace_below_the_two() -> None:
    assert compare("AS", "2C", ace_low=True) < 0
    assert compare("AS", "2C", ace_low=False) > 0


def test_two_jokers_tie() -> None:
    assert compare(JOKER, JOKER, ace_low=False) == 0


@pytest.mark.parametrize("ace_low", [False, True])
def test_suits_never_matter(ace_low: bool) -> None:
    for rank in RANKS:
        assert compare(rank + "C", rank + "S", ace_low=ace_low) == 0


def test_card_codes_are_rank_then_suit_or_jk() -> None:
    for code in ordered_shoe(1, 2):
        assert code == JOKER or (len(code) == 2 and code[0] in RANKS and code[1] in SUITS)


def test_shoe_order_is_decks_of_clubs_diamonds_hearts_spades_then_jokers() -> None:
    shoe = ordered_shoe(2, 2)
    assert len(shoe) == 108
    assert shoe[:3] == ("2C", "3C", "4C")
    assert shoe[12:14] == ("AC", "2D")
    assert shoe[51:54] == ("AS", JOKER, JOKER)
    assert shoe[54:] == shoe[:54]


def test_rank_counts_treat_the_joker_as_a_fourteenth_rank() -> None:
    counts = rank_counts(3, 2)
    assert counts[JOKER] == 6
    assert len(counts) == 14
    assert all(counts[rank] == 12 for rank in RANKS)
    assert JOKER not in rank_counts(3, 0)
