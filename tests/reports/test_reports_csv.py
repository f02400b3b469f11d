"""The payout report as CSV: its header lines, the group's column, the figures, then one TOTAL
line a currency; an empty period says so."""

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
    "ties,wars,surrenders,tie_bets_won,hold_std_error,hold_interval_low,hold_interval_high,"
    "outside_interval"
)
GENERATED = datetime(2026, 6, 11, 8, 30, tzinfo=UTC)
HEADER_LINES = 8


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
    hold_std_error=0.1,
    hold_interval_low=-0.15,
    hold_interval_high=0.25,
    outside_interval=False,
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
        totals=(TOTAL,) if rows else (),
        discrepancies=Discrepancies(0, ()),
        generated_at=GENERATED,
        software_version="1.2.3",
        engine_version="1.0.0",
    )


def _table(text: str) -> list[str]:
    return text.splitlines()[HEADER_LINES:]


def test_rows_lead_with_their_group_and_totals_with_total() -> None:
    text = to_csv(_report("day", (replace(TOTAL, day=date(2026, 6, 10)),)))
    assert _table(text) == [
        f"day,{HEADER}",
        "2026-06-10,USD,2,400,300,100,0.25,17,0.0425,1,1,0,0,0.1,-0.15,0.25,False",
        "TOTAL,USD,2,400,300,100,0.25,17,0.0425,1,1,0,0,0.1,-0.15,0.25,False",
    ]


def test_the_first_column_is_named_for_the_grouping() -> None:
    text = to_csv(_report("player", (replace(TOTAL, player_id=7),)))
    assert _table(text)[0] == f"player_id,{HEADER}"
    assert _table(text)[1].startswith("7,USD,")


def test_a_null_ratio_is_an_empty_cell() -> None:
    empty = PayoutRow("USD", 1, 0, 0, 0, None, 0, None, 0, 0, 0, 0, table_id=3)
    assert _table(to_csv(_report("table", (empty,))))[1] == "3,USD,1,0,0,0,,0,,0,0,0,0,,,,"


def test_the_header_says_what_when_by_which_software_and_for_which_period() -> None:
    lines = to_csv(_report("day", ())).splitlines()[:HEADER_LINES]
    assert lines == [
        "# payout report",
        "# generated_at,2026-06-11T08:30:00Z",
        "# software_version,1.2.3",
        "# engine_version,1.0.0",
        "# from,2026-06-10",
        "# to,2026-06-10",
        "# group_by,day",
        "# time_zone,UTC",
    ]


def test_a_period_without_hands_has_a_row_saying_so() -> None:
    assert _table(to_csv(_report("day", ()))) == [
        f"day,{HEADER}",
        "NO ACTIVITY,no hands were settled in this period",
    ]
