"""Gaming days: the reporting calendar of a casino, not the UTC calendar.

A gaming day D runs from D at `start_hour` local time to D+1 at `start_hour` local time, in
the configured time zone. Local boundaries are converted to UTC with zoneinfo, so a day on
which the clocks change is 23 or 25 hours long, and consecutive days always tile: the end of
D is computed exactly as the start of D+1. Queries then filter by a plain UTC range, which
the indexes on `created_at` / `settled_at` serve.
"""

from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from typing import Final
from zoneinfo import ZoneInfo

from api.errors import InvalidInput

# Far enough apart for any casino, near enough that every zone's day boundaries stay
# representable (9999-12-31 has no next day to end on).
FIRST_DAY: Final = date(1970, 1, 2)
LAST_DAY: Final = date(9998, 12, 30)


def parse_day(text: str) -> date:
    """A gaming day written YYYY-MM-DD; ValueError with a client-facing message otherwise."""
    try:
        if len(text) != 10:
            raise ValueError(text)
        day = date.fromisoformat(text)
    except ValueError:
        raise ValueError(f"must be a date, YYYY-MM-DD, got {text!r}") from None
    if not FIRST_DAY <= day <= LAST_DAY:
        raise ValueError(f"must be from {FIRST_DAY} to {LAST_DAY}, got {text}")
    return day


@dataclass(frozen=True, slots=True)
class DayRange:
    """Gaming days `first` to `last` inclusive, as a request names them (`from`, `to`):
    never empty, so a report given one has no range left to check."""

    first: date
    last: date

    def __post_init__(self) -> None:
        if self.first > self.last:
            raise InvalidInput("from", "must not be after `to`")

    @classmethod
    def parse(cls, first: str, last: str) -> "DayRange":
        """The range `from`..`to` written YYYY-MM-DD; InvalidInput naming the field at fault."""
        return cls(_parse_field("from", first), _parse_field("to", last))


def _parse_field(name: str, text: str) -> date:
    try:
        return parse_day(text)
    except ValueError as error:
        raise InvalidInput(name, str(error)) from None


def day_start(day: date, zone: ZoneInfo, start_hour: int) -> datetime:
    """The UTC instant gaming day `day` begins (a non-existent local hour resolves as zoneinfo
    does with fold=0, the same way for the day that ends there, so days still tile)."""
    local = datetime.combine(day, time(start_hour), tzinfo=zone)
    return local.astimezone(UTC)


def day_bounds(
    first: date, last: date, zone: ZoneInfo, start_hour: int
) -> tuple[datetime, datetime]:
    """The half-open UTC range [start, end) covering gaming days `first` to `last` inclusive."""
    return day_start(first, zone, start_hour), day_start(last + timedelta(days=1), zone, start_hour)


def gaming_day(moment: datetime, zone: ZoneInfo, start_hour: int) -> date:
    """The gaming day an instant belongs to."""
    local = moment.astimezone(zone)
    if local.hour >= start_hour:
        return local.date()
    return local.date() - timedelta(days=1)
