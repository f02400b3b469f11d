"""Payout reports: response bodies, read from the service's `PayoutReport` by attribute
(`PayoutReportView.model_validate(report, from_attributes=True)`)."""

from datetime import date, datetime
from typing import Annotated, Literal

from pydantic import BeforeValidator, Field

from api.http.schemas import ResponseBody


def _iso_day(value: object) -> object:
    return value.isoformat() if isinstance(value, date) else value


IsoDay = Annotated[str, BeforeValidator(_iso_day)]
"""A gaming day, YYYY-MM-DD: the report's `date` as the contract writes it (a plain string)."""


class PayoutRow(ResponseBody):
    day: IsoDay | None = Field(default=None, description="Gaming day (group_by=day).")
    table_id: int | None = Field(default=None, description="group_by=table.")
    player_id: int | None = Field(default=None, description="group_by=player.")
    currency: str
    hands: int
    handle: int = Field(description="Everything staked: bets, raises and tie bets (ledger).")
    returned: int = Field(description="Everything returned to wallets (ledger).")
    house_win: int = Field(description="handle - returned.")
    hold: float | None = Field(description="house_win / handle; null when handle is 0.")
    theoretical_win: int = Field(description="Expected house win from the exact odds.")
    theoretical_hold: float | None
    ties: int
    wars: int
    surrenders: int
    tie_bets_won: int
    hold_std_error: float | None = Field(
        description="Standard error of the hold, from the exact variance of the rules and "
        "the bets made (always-war player); null when handle is 0."
    )
    hold_interval_95: list[float] | None = Field(
        description="[low, high]: where the hold falls 95% of the time if the game is as "
        "published (theoretical hold +- 1.96 standard errors)."
    )
    outside_interval: bool | None = Field(
        description="The hold is outside hold_interval_95: worth a look (COMAR 36.05.03.25)."
    )


class GamingDayWindow(ResponseBody):
    timezone: str
    start_hour: int
    utc_start: datetime
    utc_end: datetime


class PayoutDiscrepancy(ResponseBody):
    hand_id: int
    field: str
    ledger: int | None
    record: int


class PayoutDiscrepancies(ResponseBody):
    count: int
    items: list[PayoutDiscrepancy] = Field(description="The first 1000.")


class ReportHeaderView(ResponseBody):
    title: str
    generated_at: datetime
    software_version: str
    engine_version: str
    filters: dict[str, str]
    time_zone: str


class PayoutReportView(ResponseBody):
    from_day: IsoDay = Field(alias="from")
    to_day: IsoDay = Field(alias="to")
    group_by: Literal["day", "table", "player"]
    gaming_day: GamingDayWindow
    rows: list[PayoutRow]
    totals: list[PayoutRow] = Field(description="One per currency; key fields null.")
    discrepancies: PayoutDiscrepancies
    header: ReportHeaderView
    no_activity: bool = Field(description="True when no hand was settled in the period.")
