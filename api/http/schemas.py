"""What every context's request and response bodies share: the base models and field types.

Requests are strict: amounts must be JSON integers (never floats or strings) and unknown
fields are refused, so a client's typo fails loudly instead of being ignored.
"""

from datetime import UTC, datetime
from enum import StrEnum
from typing import Annotated, Any, ClassVar, Protocol

from pydantic import (
    AfterValidator,
    AwareDatetime,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StringConstraints,
)

MAX_ID = 2**63 - 1  # ids are 64-bit: larger ones cannot exist
Id = Annotated[int, Field(ge=1, le=MAX_ID)]
Amount = Annotated[int, Field(ge=0, le=10**15)]
PositiveAmount = Annotated[int, Field(gt=0, le=10**15)]
Currency = Annotated[str, StringConstraints(pattern=r"^[A-Z]{3}$")]
# Free text never holds control characters, C0 or C1 (PostgreSQL refuses NUL in text
# outright), nor the bidirectional overrides and isolates that make a name display as
# something else (U+202A-U+202E, U+2066-U+2069).
PRINTABLE = r"^[^\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]+$"
Name = Annotated[str, StringConstraints(min_length=1, max_length=100, pattern=PRINTABLE)]
Reference = Annotated[str, StringConstraints(min_length=1, max_length=255, pattern=PRINTABLE)]


def _instant_from_text(value: object) -> object:
    """JSON carries instants as text, which strict models refuse for a datetime: parsed
    here first (RFC 3339; an instant without its offset is still refused after)."""
    if isinstance(value, str):
        try:
            return datetime.fromisoformat(value)
        except ValueError:
            raise ValueError("must be an RFC 3339 date-time with its offset") from None
    return value


def in_utc(moment: datetime) -> datetime:
    """The instant in UTC, as it is stored: a time without its offset is refused (its zone
    is anybody's guess), and so is one whose UTC falls outside the years 1 to 9999 that a
    datetime holds (0001-01-01T00:00:00+01:00 is in the year 0 in UTC)."""
    if moment.utcoffset() is None:
        raise ValueError("must be an RFC 3339 date-time with its offset")
    try:
        return moment.astimezone(UTC)
    except OverflowError:
        raise ValueError("is out of range: its UTC time is not in the years 1 to 9999") from None


Instant = Annotated[AwareDatetime, BeforeValidator(_instant_from_text), AfterValidator(in_utc)]


class DecidedBy(StrEnum):
    """Who decided a tie: the player, or the house when the player abandoned it."""

    PLAYER = "player"
    TIMEOUT = "timeout"


class Period(StrEnum):
    DAY = "day"
    WEEK = "week"
    MONTH = "month"


def lax_enum(enum: type[StrEnum]) -> BeforeValidator:
    """A request field of a named enum (a component of its own in the document, which
    generated clients turn into one type): strict models take no strings for enums, but
    JSON has nothing else, so the text is converted first."""

    def converted(value: object) -> object:
        if isinstance(value, str):
            try:
                return enum(value)
            except ValueError:
                allowed = ", ".join(member.value for member in enum)
                raise ValueError(f"must be one of {allowed}") from None
        return value

    return BeforeValidator(converted)


class RequestBody(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class Answerable(Protocol):
    """What a command answers with: a `ResponseBody`, or a leaner body that writes the same
    JSON (`api.domain.hands.answer.HandAnswer`)."""

    def bodies(self) -> tuple[dict[str, Any], dict[str, Any]]:
        """The JSON body to send, and the body as an idempotency record keeps it."""
        ...


class ResponseBody(BaseModel):
    """A response body, built from what a service returns (its dataclasses' attributes)."""

    model_config = ConfigDict(
        frozen=True, serialize_by_alias=True, populate_by_name=True, from_attributes=True
    )

    SECRET_FIELDS: ClassVar[frozenset[str]] = frozenset()
    """Fields shown once and never stored: an idempotent replay returns them as null."""

    def bodies(self) -> tuple[dict[str, Any], dict[str, Any]]:
        """The JSON body to send, and the body as an idempotency record keeps it: every
        secret field nulled. Dumped once, for both."""
        body: dict[str, Any] = self.model_dump(mode="json", by_alias=True)
        return body, body | dict.fromkeys(self.SECRET_FIELDS)
