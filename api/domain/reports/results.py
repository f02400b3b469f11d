"""The payout report as the service returns it: frozen values, the one representation of it.

The API's schema reads these by attribute; the CSV, and the command line's table and JSON,
render them column by column. Nothing here knows how it will be shown.
"""

from dataclasses import dataclass
from datetime import date, datetime
from typing import Final, Literal

GroupBy = Literal["day", "table", "player"]

GROUP_COLUMNS: Final[dict[GroupBy, str]] = {
    "day": "day",
    "table": "table_id",
    "player": "player_id",
}
"""The attribute of a `PayoutRow` holding the group, and the column that shows it."""

FIGURES: Final = (
    "currency",
    "hands",
    "handle",
    "returned",
    "house_win",
    "hold",
    "theoretical_win",
    "theoretical_hold",
    "ties",
    "wars",
    "surrenders",
    "tie_bets_won",
    "hold_std_error",
    "hold_interval_low",
    "hold_interval_high",
    "outside_interval",
)
"""The attributes of a `PayoutRow` after its group, in the order every rendering shows them."""


@dataclass(frozen=True, slots=True)
class PayoutRow:
    """What one group of hands staked, returned and won, in one currency.

    A row has exactly one of `day`, `table_id` and `player_id` (per the report's `group_by`);
    a total, one per currency, has none. Money is in minor units, from the ledger.
    """

    currency: str
    hands: int
    handle: int
    returned: int
    house_win: int
    hold: float | None  # None when nothing was staked
    theoretical_win: int
    theoretical_hold: float | None
    ties: int
    wars: int
    surrenders: int
    tie_bets_won: int
    hold_std_error: float | None = None  # None when nothing was staked
    hold_interval_low: float | None = None  # the hold's 95% interval if the game is fair
    hold_interval_high: float | None = None
    outside_interval: bool | None = None
    day: date | None = None
    table_id: int | None = None
    player_id: int | None = None

    @property
    def hold_interval_95(self) -> tuple[float, float] | None:
        if self.hold_interval_low is None or self.hold_interval_high is None:
            return None
        return (self.hold_interval_low, self.hold_interval_high)


@dataclass(frozen=True, slots=True)
class Discrepancy:
    """A hand whose ledger figure (None: no such transaction) and record disagree."""

    hand_id: int
    field: str
    ledger: int | None
    record: int


@dataclass(frozen=True, slots=True)
class Discrepancies:
    """How many disagreements there are, and the first of them (the list is bounded)."""

    count: int
    items: tuple[Discrepancy, ...]


@dataclass(frozen=True, slots=True)
class GamingDayWindow:
    """The calendar the report was cut by, and the UTC range [utc_start, utc_end) it read."""

    timezone: str
    start_hour: int
    utc_start: datetime
    utc_end: datetime


@dataclass(frozen=True, slots=True)
class ReportHeader:
    """What a regulator's copy of a report must say of itself (PA 58 Pa. Code §811a.9)."""

    title: str
    generated_at: datetime
    software_version: str
    engine_version: str
    filters: dict[str, str]
    time_zone: str


@dataclass(frozen=True, slots=True)
class PayoutReport:
    """Gaming days `from_day` to `to_day` inclusive, one row per group and currency; `totals`
    has one row per currency (money in different currencies never adds up)."""

    from_day: date
    to_day: date
    group_by: GroupBy
    gaming_day: GamingDayWindow
    rows: tuple[PayoutRow, ...]
    totals: tuple[PayoutRow, ...]
    discrepancies: Discrepancies
    generated_at: datetime
    software_version: str
    engine_version: str

    @property
    def no_activity(self) -> bool:
        """No hand settled in the period: the report says so rather than being blank."""
        return not self.rows

    @property
    def header(self) -> ReportHeader:
        return ReportHeader(
            title="payout report",
            generated_at=self.generated_at,
            software_version=self.software_version,
            engine_version=self.engine_version,
            filters={
                "from": self.from_day.isoformat(),
                "to": self.to_day.isoformat(),
                "group_by": self.group_by,
            },
            time_zone=self.gaming_day.timezone,
        )
