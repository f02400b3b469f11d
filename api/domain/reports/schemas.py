"""Payout reports: response bodies."""

from datetime import datetime
from typing import Literal

from pydantic import Field

from api.http.schemas import ResponseBody


class PayoutRow(ResponseBody):
    day: str | None = Field(default=None, description="Gaming day (group_by=day).")
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


class PayoutReportView(ResponseBody):
    from_day: str = Field(alias="from")
    to_day: str = Field(alias="to")
    group_by: Literal["day", "table", "player"]
    gaming_day: GamingDayWindow
    rows: list[PayoutRow]
    totals: list[PayoutRow] = Field(description="One per currency; key fields null.")
    discrepancies: PayoutDiscrepancies
