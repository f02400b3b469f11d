"""The pack a War game is dealt from, and how its cards compare.

Cards are the codes of fairness.md (`AS`, `TD`, `JK`), so a War game's log reads like a
hand's; ranks beyond the standard thirteen are numbered (`17E`: the 17 of eagles).
"""

from dataclasses import dataclass
from functools import cache
from typing import Final

from casino.cards import JOKER
from casino.war.rules import SUIT_LETTERS, WarRules

JOKER_STRENGTH: Final = 1_000


def ordered_deck(rules: WarRules) -> tuple[str, ...]:
    """The pack before the shuffle, deck by deck: suit by suit, ranks low to high, jokers."""
    one = tuple(rank + suit for suit in SUIT_LETTERS[: rules.suits] for rank in rules.ranks)
    return (one + (JOKER,) * rules.jokers_per_deck) * rules.decks


def rank_of(card: str) -> str:
    return JOKER if card == JOKER else card[:-1]


def suit_of(card: str) -> str:
    return "" if card == JOKER else card[-1]


@dataclass(frozen=True, slots=True)
class Ranking:
    """How a rule set orders ranks: strengths for comparing, pip values for war sizes."""

    strength: dict[str, int]
    lowest: str
    highest: str

    def of(self, card: str) -> int:
        return self.strength[rank_of(card)]

    def pip_value(self, card: str, picture_war_size: str) -> int:
        """The cards a war on this rank asks of each player (Razboi, Syrian War): a number
        card its number, the ace 11 when high and 1 when low, a picture 10 or its rank."""
        rank = rank_of(card)
        if rank == "A":
            return 1 if self.strength["A"] < self.strength["2"] else 11
        if rank in "JQK":
            return 10 if picture_war_size == "ten" else 11 + "JQK".index(rank)
        if rank == "T":
            return 10
        return int(rank)


@cache
def ranking(rules: WarRules) -> Ranking:
    ranks = list(rules.ranks)
    if rules.ace_low and "A" in ranks:
        ranks.remove("A")
        ranks.insert(0, "A")
    strength = {rank: index for index, rank in enumerate(ranks)}
    strength[JOKER] = JOKER_STRENGTH
    return Ranking(strength=strength, lowest=ranks[0], highest=ranks[-1])
