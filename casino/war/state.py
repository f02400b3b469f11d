"""A War game as immutable values: its set-up, its state between turns, what a turn did.

The state is all a turn needs besides the set-up and the players' input, so a game played
over many requests stores this and nothing else; `position` (the fairness stream's
integers consumed so far) lets the next turn resume the stream where the last one left it.
"""

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Final, Literal

from casino.errors import InvalidChoice
from casino.fairness import HandSeeds
from casino.war.rules import WarRules

Choice = Literal["top", "bottom", "random", "crazy", "steal"]
Policy = Literal["human", "top", "bottom", "random", "crazy", "steal"]
EndReason = Literal["winner", "draw", "cycle", "cap"]

CHOICES: Final[tuple[Choice, ...]] = ("top", "bottom", "random", "crazy", "steal")
POLICIES: Final[tuple[Policy, ...]] = ("human", *CHOICES)
CRAZY_EVENTS: Final = (
    "swap_draw_decks",
    "swap_won_cards",
    "shuffle_draw_decks",
    "everyone_loses",
    "suit_wins",
    "lowest_wins",
    "random_player_loses_won_cards",
)


def check_choice(rules: WarRules, choice: str, where: str) -> Choice:
    """Refuse a choice these rules give no meaning to (a Crazy vote without Crazy Mode)."""
    allowed: list[Choice] = ["top"]
    if rules.card_choice:
        allowed += ["bottom", "random"]
    if rules.crazy_mode:
        allowed.append("crazy")
    if rules.steal:
        allowed.append("steal")
    for candidate in allowed:
        if choice == candidate:
            return candidate
    raise InvalidChoice(where, f"must be one of {', '.join(allowed)} in this game")


def as_policy(name: str, where: str) -> Policy:
    """A seat's policy from its name as stored or posted."""
    for policy in POLICIES:
        if name == policy:
            return policy
    raise InvalidChoice(where, f"must be one of {', '.join(POLICIES)}")


@dataclass(frozen=True, slots=True)
class WarGame:
    """What fixes a game before its first turn: rules, each seat's policy, the seeds."""

    rules: WarRules
    seats: tuple[Policy, ...]
    seeds: HandSeeds

    def __post_init__(self) -> None:
        if len(self.seats) != self.rules.players:
            raise InvalidChoice("seats", f"must list {self.rules.players} seats")
        for index, policy in enumerate(self.seats):
            if policy != "human":
                check_choice(self.rules, policy, f"seats[{index}].policy")

    @property
    def deterministic(self) -> bool:
        """Whether the next turn follows from the state alone, so a repeated state is a
        cycle: no human whose next choice could differ."""
        return "human" not in self.seats


@dataclass(frozen=True, slots=True)
class GameEnd:
    reason: EndReason
    winner: int | None = None


@dataclass(frozen=True, slots=True)
class GameState:
    """The piles between turns. `draw[s][0]` is the top of seat s's face-down packet;
    `won[s][-1]` the top of its won pile; `dead` holds cards Crazy Mode put out of play.

    `checkpoint`, `power` and `since` are Brent's cycle detection: the state's digest at the
    last power-of-two mark, so a cycle is found in constant memory however long the game.
    """

    draw: tuple[tuple[str, ...], ...]
    won: tuple[tuple[str, ...], ...]
    dead: tuple[str, ...] = ()
    turn: int = 0
    position: int = 0
    checkpoint: str = ""
    power: int = 1
    since: int = 0
    end: GameEnd | None = None

    def cards_held(self, seat: int) -> int:
        return len(self.draw[seat]) + len(self.won[seat])

    @property
    def seats_in(self) -> tuple[int, ...]:
        return tuple(s for s in range(len(self.draw)) if self.cards_held(s))

    @property
    def card_count(self) -> int:
        return sum(map(len, self.draw)) + sum(map(len, self.won)) + len(self.dead)


@dataclass(frozen=True, slots=True)
class Play:
    seat: int
    card: str
    face_up: bool


@dataclass(frozen=True, slots=True)
class Steal:
    thief: int
    victim: int
    cards: int


@dataclass(frozen=True, slots=True)
class TurnInput:
    """The human seats' choices for one turn (seat -> choice) and how a human who runs out
    of draw cards this turn sorts the won cards into a new draw deck."""

    choices: Mapping[int, str] = field(default_factory=dict)
    sort: str | None = None


@dataclass(frozen=True, slots=True)
class TurnRecord:
    """One turn as the log shows it: enough to follow the game, and to compare a replay."""

    turn: int
    choices: tuple[str | None, ...]
    event: str | None
    plays: tuple[Play, ...]
    steals: tuple[Steal, ...]
    wars: int
    winner: int | None
    recycled: tuple[tuple[int, str], ...]
    out: tuple[int, ...]
    end: GameEnd | None
