"""`casino-war report payouts`: the operator payout report on the command line.

The same computation as `GET /v1/reports/payouts`: hands settled in the gaming days
`--from` to `--to` (inclusive, by the day of settlement), money from the ledger.
"""

import argparse
import sys
from typing import Any

from rich.console import Console
from rich.table import Table

from api.cli.common import EXIT_OK, Subparsers, UsageError, iso_day, print_json
from api.db.database import Database
from api.db.snapshot import read_snapshot
from api.domain.reports.payouts import CSV_FIELDS, GROUP_KEYS, payout_report, to_csv
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
    if args.first > args.last:
        raise UsageError("--from must not be after --to")
    settings = get_settings()
    database = Database.connect(settings.database_url)
    try:
        with read_snapshot(database.engine) as connection:
            document = payout_report(
                connection,
                args.first,
                args.last,
                args.group_by,
                settings.time_zone,
                settings.gaming_day_start_hour,
            )
    finally:
        database.dispose()
    if args.format == "json":
        print_json(document)
    elif args.format == "csv":
        sys.stdout.write(to_csv(document))
    else:
        _print_table(document)
    return EXIT_OK


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.2%}"
    return str(value)


def _print_table(document: dict[str, Any]) -> None:
    key = GROUP_KEYS[document["group_by"]]
    window = document["gaming_day"]
    table = Table(
        title=f"Payouts {document['from']} to {document['to']} by {document['group_by']} "
        f"(gaming days {window['timezone']}, from {window['start_hour']:02d}:00)"
    )
    for name in (key, *CSV_FIELDS):
        table.add_column(name, justify="left" if name in (key, "currency") else "right")
    for row in document["rows"]:
        table.add_row(*(_cell(row.get(name)) for name in (key, *CSV_FIELDS)))
    for row in document["totals"]:
        table.add_row("TOTAL", *(_cell(row.get(name)) for name in CSV_FIELDS), style="bold")
    console = Console(file=sys.stdout, width=200)
    console.print(table)
    discrepancies = document["discrepancies"]
    console.print(f"discrepancies between ledger and hand records: {discrepancies['count']}")
    for item in discrepancies["items"]:
        console.print(
            f"  hand {item['hand_id']}: {item['field']} ledger {item['ledger']} "
            f"record {item['record']}"
        )
