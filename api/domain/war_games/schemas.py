"""Free War games: request and response bodies."""

from datetime import datetime
from enum import StrEnum
from typing import Annotated, Literal

from pydantic import Field, StringConstraints

from api.http.schemas import RequestBody, ResponseBody, lax_enum

PolicyName = Literal["human", "top", "bottom", "random", "crazy", "steal"]
ChoiceName = Literal["top", "bottom", "random", "crazy", "steal"]


class SortOrder(StrEnum):
    """How a human seat's won cards become its new draw deck."""

    COLLECTED = "collected"
    HIGH_TO_LOW = "high_to_low"
    LOW_TO_HIGH = "low_to_high"
    RANDOM = "random"


SeatNumber = Annotated[str, StringConstraints(pattern=r"^[0-3]$")]
ClientSeed = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9_-]{1,64}$")]
OptionName = Annotated[str, StringConstraints(pattern=r"^[a-z_]{1,32}$")]
Word = Annotated[str, StringConstraints(pattern=r"^[a-z0-9_]{1,32}$")]


class WarSeat(RequestBody):
    policy: PolicyName


class WarGameCreate(RequestBody):
    variant: Word = Field(
        default="classic",
        description="classic, three_down, jokers, two_decks, ace_low, steal, "
        "pyanitsa, tod_und_leben, syrian, razboi or online (docs/war-games.md)",
    )
    players: int | None = Field(default=None, ge=2, le=4)
    seats: list[WarSeat] | None = Field(
        default=None,
        min_length=2,
        max_length=4,
        description="One per player; default: seat 0 human, the house's seats automatic.",
    )
    options: dict[OptionName, int | bool | Word] = Field(
        default_factory=dict, description="Rule options overriding the variant's."
    )
    client_seed: ClientSeed | None = None


class WarTurnPlay(RequestBody):
    choices: dict[SeatNumber, ChoiceName] = Field(
        default_factory=dict, description="Each human seat's choice; top when not given."
    )
    sort: Annotated[SortOrder, lax_enum(SortOrder)] | None = Field(
        default=None, description="How a human seat sorts its won cards into a new draw deck."
    )


class WarSeatView(ResponseBody):
    seat: int
    policy: str
    draw: int
    won: int
    won_top: str | None


class WarEnd(ResponseBody):
    reason: Literal["winner", "draw", "cycle", "cap"]
    winner: int | None


class WarPlay(ResponseBody):
    seat: int
    card: str
    face_up: bool


class WarSteal(ResponseBody):
    thief: int
    victim: int
    cards: int


class WarRecycle(ResponseBody):
    seat: int
    sort: str


class WarTurnRecord(ResponseBody):
    turn: int
    choices: list[str | None]
    event: str | None
    plays: list[WarPlay]
    steals: list[WarSteal]
    wars: int
    winner: int | None
    recycled: list[WarRecycle]
    out: list[int]
    end: WarEnd | None


class WarTurnInput(ResponseBody):
    choices: dict[str, str]
    sort: str | None


class WarTurnView(ResponseBody):
    input: WarTurnInput
    record: WarTurnRecord


class WarGameView(ResponseBody):
    game_id: int
    variant: str
    players: int
    rules: dict[str, int | bool | str]
    status: Literal["in_progress", "finished"]
    turn: int
    seats: list[WarSeatView]
    out_of_play: int
    end: WarEnd | None
    server_seed_hash: str
    server_seed: str | None = Field(description="Revealed when the game ends.")
    client_seed: str
    nonce: int
    created_at: datetime
    finished_at: datetime | None
    turns: list[WarTurnView] = Field(description="The log; empty except on GET of the game.")


class WarTurnResult(ResponseBody):
    turn: WarTurnView
    game: WarGameView


class WarGameAuditView(ResponseBody):
    game_id: int
    status: Literal["in_progress", "finished"]
    turns: int
    matches: bool
    first_difference: int | None
    server_seed_hash_matches: bool
