"""Player protection: request and response bodies."""

from datetime import datetime
from typing import Annotated, Literal

from pydantic import Field

from api.http.schemas import (
    PRINTABLE,
    Currency,
    Instant,
    Period,
    RequestBody,
    ResponseBody,
    lax_enum,
)

LimitKindName = Literal["deposit", "loss", "wager", "max_bet", "play_time"]
RequestPeriod = Annotated[Period, lax_enum(Period)]
Reason = Annotated[str, Field(min_length=1, max_length=500, pattern=PRINTABLE)]


class LimitChangeBody(RequestBody):
    kind: LimitKindName
    period: RequestPeriod | None = Field(
        default=None,
        description="day, week or month for deposit, loss and wager; day for "
        "play_time; none for max_bet.",
    )
    currency: Currency | None = Field(
        default=None, description="Money limits only; the house currency when not given."
    )
    amount: int | None = Field(
        ge=1,
        le=10**15,
        description="Minor units (seconds for play_time); null removes the limit.",
    )


class LimitsUpdate(RequestBody):
    limits: list[LimitChangeBody] = Field(min_length=1, max_length=20)


class PendingView(ResponseBody):
    amount: int | None
    effective_at: datetime


class LimitView(ResponseBody):
    kind: LimitKindName
    period: Period | None
    currency: str | None
    amount: int | None = Field(description="In force now; null when only a pending one exists.")
    pending: PendingView | None = Field(
        description="A looser limit waiting out the cooling-off period."
    )


class LimitsView(ResponseBody):
    player_id: int
    cooling_off_seconds: int
    limits: list[LimitView]


class ExclusionRequest(RequestBody):
    until: Instant | None = Field(description="RFC 3339; null: indefinite.")
    reason: Reason | None = None


class ExclusionView(ResponseBody):
    player_id: int
    excluded: bool
    since: datetime | None
    until: datetime | None
    reason: str | None
