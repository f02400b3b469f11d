"""`casino-war events export`: the significant-events log for a range of gaming days, as
JSON lines or CSV, for a regulator or an archive."""

import argparse
import csv
import json
import sys
from datetime import timedelta

from api.cli.common import EXIT_OK, Subparsers, UsageError, iso_day
from api.db.database import Database
from api.domain.events.schemas import EventView
from api.domain.events.service import EventFilters, events_between
from api.domain.reports.gaming_day import day_start
from api.settings import get_settings

COLUMNS = ("id", "seq", "at", "type", "actor", "player_id", "subject", "details", "hash")


def register(subparsers: Subparsers) -> None:
    events = subparsers.add_parser("events", help="the significant-events log")
    commands = events.add_subparsers(dest="events_command", metavar="COMMAND", required=True)
    export = commands.add_parser(
        "export",
        help="print the events of a range of gaming days",
        description="Print every significant event of the gaming days --from to --to "
        "(inclusive), oldest first, as JSON lines (one event a line) or CSV.",
        epilog="example: casino-war events export --from 2026-11-01 --to 2026-11-30 "
        "--format csv > events.csv",
    )
    export.add_argument("--from", dest="first", type=iso_day, required=True, help="YYYY-MM-DD")
    export.add_argument("--to", dest="last", type=iso_day, required=True, help="YYYY-MM-DD")
    export.add_argument("--format", choices=["jsonl", "csv"], default="jsonl")
    export.set_defaults(handler=_export)


def _export(args: argparse.Namespace) -> int:
    if args.first > args.last:
        raise UsageError("--from must not be after --to")
    settings = get_settings()
    zone, hour = settings.time_zone, settings.gaming_day_start_hour
    filters = EventFilters(
        since=day_start(args.first, zone, hour),
        until=day_start(args.last + timedelta(days=1), zone, hour),
    )
    database = Database.connect(settings.database_url)
    writer = csv.writer(sys.stdout, lineterminator="\n") if args.format == "csv" else None
    if writer is not None:
        writer.writerow(COLUMNS)
    try:
        with database.reading() as session:
            for event in events_between(session, filters):
                row = EventView.model_validate(event).model_dump(mode="json")
                if writer is None:
                    sys.stdout.write(json.dumps(row) + "\n")
                else:
                    writer.writerow(
                        [
                            json.dumps(row[c]) if isinstance(row[c], dict) else row[c]
                            for c in COLUMNS
                        ]
                    )
    finally:
        database.dispose()
    return EXIT_OK
