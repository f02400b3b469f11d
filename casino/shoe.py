"""The shoe in its published order before the shuffle."""

from functools import cache

from casino.cards import JOKER, RANKS, SUITS


@cache
def ordered_shoe(decks: int, jokers_per_deck: int) -> tuple[str, ...]:
    """Every card of the shoe, deck by deck: suits C D H S, ranks 2 to A, then jokers."""
    one_deck = tuple(rank + suit for suit in SUITS for rank in RANKS) + (JOKER,) * jokers_per_deck
    return one_deck * decks


def rank_counts(decks: int, jokers_per_deck: int) -> dict[str, int]:
    """How many cards of each rank the shoe holds (`JK` counts as a rank of its own)."""
    counts = dict.fromkeys(RANKS, 4 * decks)
    if jokers_per_deck:
        counts[JOKER] = jokers_per_deck * decks
    return counts
