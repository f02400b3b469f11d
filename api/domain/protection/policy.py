"""The calendar and timings player protection runs on: gaming days in the configured zone,
the cooling-off period before a looser limit applies, and how play time is counted."""

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Literal
from zoneinfo import ZoneInfo

from api.domain.reports.gaming_day import day_start, gaming_day

Period = Literal["day", "week", "month"]
PERIODS: dict[str, Period] = {"day": "day", "week": "week", "month": "month"}
DEFAULT_COOLING_OFF = timedelta(hours=24)
DEFAULT_IDLE_GAP = timedelta(minutes=5)
UTC_ZONE = ZoneInfo("UTC")


@dataclass(frozen=True, slots=True)
class ProtectionPolicy:
    """Built from the settings by the routes (`CASINO_WAR_GAMING_DAY_*`,
    `CASINO_WAR_LIMIT_COOLING_OFF_SECONDS`); the defaults are the settings' defaults."""

    zone: ZoneInfo = UTC_ZONE
    start_hour: int = 0
    cooling_off: timedelta = DEFAULT_COOLING_OFF
    idle_gap: timedelta = DEFAULT_IDLE_GAP

    def period_start(self, period: Period, now: datetime) -> datetime:
        """The UTC instant the gaming day, week (from Monday) or month holding `now` began."""
        day = gaming_day(now, self.zone, self.start_hour)
        if period == "week":
            day -= timedelta(days=day.weekday())
        elif period == "month":
            day = day.replace(day=1)
        return day_start(day, self.zone, self.start_hour)


def now() -> datetime:
    return datetime.now(UTC)
