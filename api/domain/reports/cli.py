"""`casino-war report payouts`: the operator payout report on the command line.

The same computation as `GET /v1/reports/payouts`: hands settled in the gaming days
`--from` to `--to` (inclusive, by the day of settlement), money from the ledger.
"""

import argparse
import re
import sys
from typing import Any

from rich.console import Console
from rich.table import Table

from api.cli.common import EXIT_OK, Subparsers, UsageError, iso_day, print_json
from api.db.database import Database
from api.db.snapshot import read_snapshot
from api.domain.reports.csv import TOTAL, to_csv
from api.domain.reports.gaming_day import DayRange
from api.domain.reports.payouts import payout_report
from api.domain.reports.results import (
    GROUP_COLUMNS,
    PayoutReport,
)
from api.domain.reports.schemas import PayoutReportView
from api.errors import InvalidInput
from api.settings import get_settings


def register(subparsers: Subparsers) -> None:
    report = subparsers.add_parser("report", help="operator reports")
    reports = report.add_subparsers(dest="report", metavar="REPORT", required=True)
    payouts = reports.add_parser(
        "payouts",
        help="handle, returns, house win and hold per gaming day, table or player",
        description="Payouts of hands settled in the gaming days FROM to TO (inclusive), "
        "from the ledger, cross-checked with the hand records.",
        epilog="examples:\n  casino-war report payouts --from 2026-11-01 --to 2026-11-30\n"
        "  casino-war report payouts --from 2026-11-24 --to 2026-11-24 --group-by table "
        "--format csv > payouts.csv",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    payouts.add_argument(
        "--from", dest="first", type=iso_day, required=True, help="first gaming day, YYYY-MM-DD"
    )
    payouts.add_argument(
        "--to", dest="last", type=iso_day, required=True, help="last gaming day, YYYY-MM-DD"
    )
    payouts.add_argument(
        "--group-by",
        choices=("day", "table", "player"),
        default="day",
        help="one row per gaming day, table or player (%(default)s)",
    )
    payouts.add_argument(
        "--format",
        choices=("table", "csv", "json"),
        default="table",
        help="a table for people, or the API's CSV or JSON (%(default)s)",
    )
    payouts.set_defaults(handler=_payouts)


def _payouts(args: argparse.Namespace) -> int:
    try:
        days = DayRange(args.first, args.last)
    except InvalidInput as error:
        raise UsageError(_as_options(error)) from None
    settings = get_settings()
    database = Database.connect(settings.database_url)
    try:
        with read_snapshot(database.engine) as connection:
            report = payout_report(
                connection,
                days,
                args.group_by,
                settings.time_zone,
                settings.gaming_day_start_hour,
            )
    finally:
        database.dispose()
    if args.format == "json":
        print_json(_json_document(report))
    elif args.format == "csv":
        sys.stdout.write(to_csv(report))
    else:
        _print_table(report)
    return EXIT_OK


def _as_options(error: InvalidInput) -> str:
    """A refused field in the command line's words: the field `from` is the option --from."""
    return re.sub(r"`(\w+)`", r"--\1", f"`{error.field}` {error.message}")


def _json_document(report: PayoutReport) -> dict[str, Any]:
    """The API's JSON body, exactly: one serialisation for the API and the command line."""
    view = PayoutReportView.model_validate(report, from_attributes=True)
    document: dict[str, Any] = view.model_dump(mode="json", by_alias=True)
    return document


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "YES" if value else "no"
    if isinstance(value, float):
        return f"{value:.2%}"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


TABLE_COLUMNS = (
    ("currency", "cur"),
    ("hands", "hands"),
    ("handle", "handle"),
    ("house_win", "house win"),
    ("hold", "hold"),
    ("theoretical_hold", "theo hold"),
    ("outside_interval", "outside 95%"),
)
"""What the table shows: the figures a person reads, in a terminal's 80 columns; every
column is in `--format csv` and `--format json`."""


def _print_table(report: PayoutReport) -> None:
    column = GROUP_COLUMNS[report.group_by]
    window = report.gaming_day
    table = Table(
        title=f"Payouts {report.from_day} to {report.to_day} by {report.group_by}\n"
        f"(gaming days {window.timezone}, from {window.start_hour:02d}:00)"
    )
    table.add_column(column, no_wrap=True)
    for name, heading in TABLE_COLUMNS:
        table.add_column(heading, justify="left" if name == "currency" else "right")
    names = [name for name, _ in TABLE_COLUMNS]
    for row in report.rows:
        table.add_row(str(getattr(row, column)), *(_cell(getattr(row, n)) for n in names))
    if report.no_activity:
        table.add_row("no hands were settled in this period")
    for row in report.totals:
        table.add_row(TOTAL, *(_cell(getattr(row, n)) for n in names), style="bold")
    console = Console(file=sys.stdout)
    console.print(table)
    discrepancies = report.discrepancies
    console.print(f"discrepancies between ledger and hand records: {discrepancies.count}")
    for item in discrepancies.items:
        console.print(
            f"  hand {item.hand_id}: {item.field} ledger {item.ledger} record {item.record}"
        )
