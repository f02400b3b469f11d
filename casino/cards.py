"""Card codes and their ranking.

A card is its two-character code from fairness.md (`AS`, `TD`, `JK`): plain strings keep
hands trivially serialisable and make the recorded cards exactly what an auditor reads.
"""

from typing import Final

RANKS: Final = "23456789TJQKA"
SUITS: Final = "CDHS"
JOKER: Final = "JK"

_ACE_HIGH_VALUE: Final = {rank: index for index, rank in enumerate(RANKS)}
_JOKER_VALUE: Final = len(RANKS)
_ACE_LOW_VALUE: Final = -1


def card_value(code: str, *, ace_low: bool) -> int:
    """Comparable strength of a card; suits never matter and a joker beats an ace."""
    if code == JOKER:
        return _JOKER_VALUE
    rank = code[0]
    if ace_low and rank == "A":
        return _ACE_LOW_VALUE
    return _ACE_HIGH_VALUE[rank]


def compare(player: str, dealer: str, *, ace_low: bool) -> int:
    """Positive when the player's card is higher, negative when the dealer's is, 0 on a tie."""
    return card_value(player, ace_low=ace_low) - card_value(dealer, ace_low=ace_low)
