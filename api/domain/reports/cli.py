"""`casino-war report payouts`: the operator payout report on the command line.

The same computation as `GET /v1/reports/payouts`: hands settled in the gaming days
`--from` to `--to` (inclusive, by the day of settlement), money from the ledger.
"""

import argparse
import re
import sys
from dataclasses import asdict
from datetime import date
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
    FIGURES,
    GROUP_COLUMNS,
    JSON_FIGURES,
    PayoutReport,
    PayoutRow,
)
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
    )
    payouts.add_argument("--from", dest="first", type=iso_day, required=True)
    payouts.add_argument("--to", dest="last", type=iso_day, required=True)
    payouts.add_argument("--group-by", choices=("day", "table", "player"), default="day")
    payouts.add_argument("--format", choices=("table", "csv", "json"), default="table")
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
    """The JSON of `--format json`: the API's body but for three things kept as they were
    (docs/reports.md): `gaming_day` before `group_by`, times written `+00:00` rather than
    `Z`, and each row holding only its own group's column (a total, none)."""
    window = report.gaming_day
    column = GROUP_COLUMNS[report.group_by]
    return {
        "from": report.from_day.isoformat(),
        "to": report.to_day.isoformat(),
        "gaming_day": {
            "timezone": window.timezone,
            "start_hour": window.start_hour,
            "utc_start": window.utc_start.isoformat(),
            "utc_end": window.utc_end.isoformat(),
        },
        "group_by": report.group_by,
        "rows": [_json_row(row, (column, *JSON_FIGURES)) for row in report.rows],
        "totals": [_json_row(row, JSON_FIGURES) for row in report.totals],
        "discrepancies": {
            "count": report.discrepancies.count,
            "items": [asdict(item) for item in report.discrepancies.items],
        },
        "header": {**asdict(report.header), "generated_at": report.generated_at.isoformat()},
        "no_activity": report.no_activity,
    }


def _json_row(row: PayoutRow, columns: tuple[str, ...]) -> dict[str, Any]:
    values = ((name, getattr(row, name)) for name in columns)
    return {name: _json_value(v) for name, v in values}


def _json_value(value: Any) -> Any:
    if isinstance(value, date):
        return value.isoformat()
    return list(value) if isinstance(value, tuple) else value


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.2%}"
    return str(value)


def _print_table(report: PayoutReport) -> None:
    column = GROUP_COLUMNS[report.group_by]
    window = report.gaming_day
    table = Table(
        title=f"Payouts {report.from_day} to {report.to_day} by {report.group_by} "
        f"(gaming days {window.timezone}, from {window.start_hour:02d}:00)"
    )
    for name in (column, *FIGURES):
        table.add_column(name, justify="left" if name in (column, "currency") else "right")
    for row in report.rows:
        table.add_row(*(_cell(getattr(row, name)) for name in (column, *FIGURES)))
    for row in report.totals:
        table.add_row(TOTAL, *(_cell(getattr(row, name)) for name in FIGURES), style="bold")
    console = Console(file=sys.stdout, width=200)
    console.print(table)
    discrepancies = report.discrepancies
    console.print(f"discrepancies between ledger and hand records: {discrepancies.count}")
    for item in discrepancies.items:
        console.print(
            f"  hand {item.hand_id}: {item.field} ledger {item.ledger} record {item.record}"
        )
