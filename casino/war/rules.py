"""The War family as data: one immutable rule set per game, the variants as presets of it.

Every rule the source texts give, and every choice they leave open, is a field of
`WarRules`; a variant is a name for a set of field values (`VARIANTS`), and a client's
`options` override them one by one. So there is one game loop (`casino.war.engine`) and no
copy of it per variant. docs/spec/war-games.md gives each field with the sentence of the
text it follows.
"""

from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from types import MappingProxyType
from typing import Any, Final, Literal, Self, get_args

from casino.errors import InvalidRules

Deal = Literal["round_robin", "by_colour"]
UnevenDeal = Literal["deal_all", "remove_lowest"]
WarSize = Literal["fixed", "by_rank"]
PictureWarSize = Literal["ten", "rank"]
WarParticipants = Literal["tied", "all"]
ShortWar = Literal["lose", "last_card_up"]
WonCards = Literal["bottom", "pile"]
GatherOrder = Literal["played", "shuffled"]
SortOrder = Literal["collected", "high_to_low", "low_to_high", "random"]

STANDARD_RANKS: Final = "23456789TJQKA"
SUIT_LETTERS: Final = "CDHSER"  # clubs, diamonds, hearts, spades; then eagles and roses
MIN_PLAYERS: Final = 2
MAX_PLAYERS: Final = 4
MAX_TURNS_LIMIT: Final = 1_000_000


@dataclass(frozen=True, slots=True)
class WarRules:
    """Everything that decides a War game's course, given the seeds and the players' choices.

    A rule set that exists is a valid one: construction refuses combinations no text
    describes (a colour deal for four players, a steal with no won piles to steal from).
    """

    players: int = 2
    cards_per_suit: int = 13
    suits: int = 4
    decks: int = 1
    jokers_per_deck: int = 0
    ace_low: bool = False
    lowest_beats_ace: bool = False
    deal: Deal = "round_robin"
    uneven_deal: UnevenDeal = "deal_all"
    war_size: WarSize = "fixed"
    face_down: int = 1
    picture_war_size: PictureWarSize = "ten"
    war_participants: WarParticipants = "tied"
    short_war: ShortWar = "lose"
    won_cards: WonCards = "bottom"
    gather_order: GatherOrder = "played"
    sort: SortOrder = "collected"
    card_choice: bool = False
    steal: bool = False
    crazy_mode: bool = False
    crazy_likelihood: int = 50
    max_turns: int = 10_000

    def __post_init__(self) -> None:
        _require_int("players", self.players, MIN_PLAYERS, MAX_PLAYERS)
        _require_int("cards_per_suit", self.cards_per_suit, 1, 20)
        _require_int("suits", self.suits, 1, len(SUIT_LETTERS))
        _require_int("decks", self.decks, 1, 2)
        _require_int("jokers_per_deck", self.jokers_per_deck, 0, 2)
        _require_int("face_down", self.face_down, 0, 3)
        _require_int("crazy_likelihood", self.crazy_likelihood, 0, 100)
        _require_int("max_turns", self.max_turns, 1, MAX_TURNS_LIMIT)
        for name in ("ace_low", "lowest_beats_ace", "card_choice", "steal", "crazy_mode"):
            if type(getattr(self, name)) is not bool:
                raise InvalidRules(name, "must be true or false")
        for f in fields(self):
            allowed = get_args(f.type)
            if allowed and getattr(self, f.name) not in allowed:
                raise InvalidRules(f.name, f"must be one of {', '.join(allowed)}")
        if self.deal == "by_colour" and (
            self.players != 2 or self.suits != 4 or self.jokers_per_deck
        ):
            raise InvalidRules("deal", "by_colour needs two players, four suits and no jokers")
        if self.lowest_beats_ace and self.ace_low:
            raise InvalidRules("lowest_beats_ace", "needs the ace high")
        if self.crazy_mode and self.won_cards != "pile":
            raise InvalidRules("crazy_mode", "needs won_cards=pile: its events move won cards")
        if self.steal and self.won_cards != "pile":
            raise InvalidRules("steal", "needs won_cards=pile: a steal takes a won pile")
        if self.war_size == "by_rank" and self.cards_per_suit != len(STANDARD_RANKS):
            raise InvalidRules("war_size", "by_rank needs the standard 13 ranks per suit")
        if self.deck_size < self.players:
            raise InvalidRules("cards_per_suit", "the deck must give every player a card")

    @property
    def ranks(self) -> tuple[str, ...]:
        """Rank labels from lowest to highest, before the ace-low option moves the ace.

        Up to 13 cards a suit are the top ranks of the standard pack (8 make the piquet
        pack 7-A, 9 the Russian 6-A); more are numbered 1 to 20, as online War deals them.
        """
        if self.cards_per_suit <= len(STANDARD_RANKS):
            return tuple(STANDARD_RANKS[len(STANDARD_RANKS) - self.cards_per_suit :])
        return tuple(str(n) for n in range(1, self.cards_per_suit + 1))

    @property
    def deck_size(self) -> int:
        return self.decks * (self.cards_per_suit * self.suits + self.jokers_per_deck)

    def with_options(self, options: Mapping[str, object]) -> Self:
        """These rules with a client's `options` applied (strings from a command line are
        converted to the field's type), validated as a whole."""
        known = {f.name: f for f in fields(self)}
        changes: dict[str, Any] = {}  # each value checked by __post_init__
        for name, value in options.items():
            if name not in known:
                raise InvalidRules(name, "is not an option of War games")
            changes[name] = _converted(name, value, getattr(self, name))
        return replace(self, **changes)

    def as_dict(self) -> dict[str, object]:
        return {f.name: getattr(self, f.name) for f in fields(self)}


def _require_int(name: str, value: object, low: int, high: int) -> None:
    if type(value) is not int or not low <= value <= high:
        raise InvalidRules(name, f"must be an integer from {low} to {high}")


def _converted(name: str, value: object, current: object) -> object:
    """A command line's `k=v` text as the field's type; JSON values pass unchanged."""
    if not isinstance(value, str) or isinstance(current, str):
        return value
    if isinstance(current, bool):
        if value.lower() in ("true", "yes", "1"):
            return True
        if value.lower() in ("false", "no", "0"):
            return False
        raise InvalidRules(name, "must be true or false")
    try:
        return int(value)
    except ValueError:
        raise InvalidRules(name, "must be an integer") from None


_CLASSIC: Final = WarRules()

VARIANTS: Final[Mapping[str, WarRules]] = MappingProxyType(
    {
        "classic": _CLASSIC,
        "three_down": replace(_CLASSIC, face_down=3),
        "jokers": replace(_CLASSIC, jokers_per_deck=2),
        "two_decks": replace(_CLASSIC, decks=2),
        "ace_low": replace(_CLASSIC, ace_low=True),
        "steal": replace(_CLASSIC, won_cards="pile", steal=True),
        "pyanitsa": replace(_CLASSIC, cards_per_suit=9, lowest_beats_ace=True),
        "tod_und_leben": replace(_CLASSIC, cards_per_suit=8, deal="by_colour"),
        "syrian": replace(_CLASSIC, ace_low=True, war_size="by_rank"),
        "razboi": replace(_CLASSIC, war_size="by_rank"),
        "online": replace(_CLASSIC, players=4, won_cards="pile", card_choice=True, crazy_mode=True),
    }
)


def variant_rules(
    variant: str, players: int | None = None, options: Mapping[str, object] | None = None
) -> WarRules:
    """A variant's rules with the number of players and the client's options applied."""
    try:
        base = VARIANTS[variant]
    except KeyError:
        raise InvalidRules("variant", f"must be one of {', '.join(VARIANTS)}") from None
    changes = dict(options or {})
    if players is not None:
        changes["players"] = players
    return base.with_options(changes)
