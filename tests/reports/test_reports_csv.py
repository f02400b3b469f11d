"""The payout report as CSV: the group's column, the figures, then one TOTAL line a currency."""

from dataclasses import replace
from datetime import UTC, date, datetime

from api.domain.reports.csv import to_csv
from api.domain.reports.results import (
    Discrepancies,
    GamingDayWindow,
    GroupBy,
    PayoutReport,
    PayoutRow,
)

HEADER = (
    "currency,hands,handle,returned,house_win,hold,theoretical_win,theoretical_hold,"
    "ties,wars,surrenders,tie_bets_won"
)


TOTAL = PayoutRow(
    currency="USD",
    hands=2,
    handle=400,
    returned=300,
    house_win=100,
    hold=0.25,
    theoretical_win=17,
    theoretical_hold=0.0425,
    ties=1,
    wars=1,
    surrenders=0,
    tie_bets_won=0,
)


def _report(group_by: GroupBy, rows: tuple[PayoutRow, ...]) -> PayoutReport:
    return PayoutReport(
        from_day=date(2026, 6, 10),
        to_day=date(2026, 6, 10),
        group_by=group_by,
        gaming_day=GamingDayWindow(
            "UTC", 0, datetime(2026, 6, 10, tzinfo=UTC), datetime(2026, 6, 11, tzinfo=UTC)
        ),
        rows=rows,
        totals=(TOTAL,),
        discrepancies=Discrepancies(0, ()),
    )


def test_rows_lead_with_their_group_and_totals_with_total() -> None:
    text = to_csv(_report("day", (replace(TOTAL, day=date(2026, 6, 10)),)))
    assert text.splitlines() == [
        f"day,{HEADER}",
        "2026-06-10,USD,2,400,300,100,0.25,17,0.0425,1,1,0,0",
        "TOTAL,USD,2,400,300,100,0.25,17,0.0425,1,1,0,0",
    ]


def test_the_first_column_is_named_for_the_grouping() -> None:
    text = to_csv(_report("player", (replace(TOTAL, player_id=7),)))
    assert text.splitlines()[0] == f"player_id,{HEADER}"
    assert text.splitlines()[1].startswith("7,USD,")


def test_a_null_ratio_is_an_empty_cell() -> None:
    empty = PayoutRow("USD", 1, 0, 0, 0, None, 0, None, 0, 0, 0, 0, table_id=3)
    assert to_csv(_report("table", (empty,))).splitlines()[1] == "3,USD,1,0,0,0,,0,,0,0,0,0"
