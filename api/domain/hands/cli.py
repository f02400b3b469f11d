"""`casino-war hands unfinished` and `casino-war hands resolve-abandoned`.

Hands awaiting a decision, and the house resolving those that waited longer than
`CASINO_WAR_DECISION_TIMEOUT_SECONDS` with `CASINO_WAR_ABANDONED_TIE_ACTION` (see
`api.domain.hands.unfinished` for why surrender is the default and when war falls back).
"""

import argparse
import sys
from dataclasses import asdict

from api.cli.common import EXIT_OK, Subparsers, counted, examples, print_json
from api.db.database import Database
from api.domain.hands.schemas import UnfinishedHandView
from api.domain.hands.unfinished import resolve_abandoned, unfinished_hands
from api.settings import get_settings


def register(subparsers: Subparsers) -> None:
    hands = subparsers.add_parser("hands", help="hands awaiting a decision")
    commands = hands.add_subparsers(dest="hands_command", metavar="COMMAND", required=True)
    unfinished = commands.add_parser(
        "unfinished",
        help="list hands awaiting a decision, oldest first",
        **examples("casino-war hands unfinished", "casino-war hands unfinished --json"),
    )
    unfinished.add_argument("--json", action="store_true", help="print one JSON document")
    unfinished.set_defaults(handler=_unfinished)
    resolve = commands.add_parser(
        "resolve-abandoned",
        help="resolve hands waiting longer than the decision timeout",
        description="Resolve every hand that has awaited a decision longer than "
        "CASINO_WAR_DECISION_TIMEOUT_SECONDS with CASINO_WAR_ABANDONED_TIE_ACTION "
        "(surrender by default; war falls back to surrender when the wallet cannot "
        "cover the raise), one transaction per hand, recorded as decided by timeout.",
        **examples("casino-war hands resolve-abandoned --json"),
    )
    resolve.add_argument("--json", action="store_true", help="print one JSON document")
    resolve.set_defaults(handler=_resolve)


def _unfinished(args: argparse.Namespace) -> int:
    settings = get_settings()
    database = Database.connect(settings.database_url)
    try:
        with database.reading() as session:
            items = unfinished_hands(session, settings.decision_timeout_seconds)
    finally:
        database.dispose()
    if args.json:
        print_json(
            {
                "timeout_seconds": settings.decision_timeout_seconds,
                "items": [
                    UnfinishedHandView.model_validate(item).model_dump(mode="json")
                    for item in items
                ],
            }
        )
        return EXIT_OK
    out = sys.stdout.write
    verb = "awaits" if len(items) == 1 else "await"
    timeout = settings.decision_timeout_seconds
    out(f"{counted(len(items), 'hand')} {verb} a decision (timeout {timeout} s)\n")
    for item in items:
        flag = "OVERDUE " if item.overdue else ""
        out(
            f"  {flag}hand {item.id}: player {item.player_id}, table {item.table_id}, "
            f"bet {item.bet} {item.currency}, {item.player_card}/{item.dealer_card}, "
            f"waiting {item.waiting_seconds} s since {item.created_at.isoformat()}\n"
        )
    return EXIT_OK


def _resolve(args: argparse.Namespace) -> int:
    settings = get_settings()
    database = Database.connect(settings.database_url)
    try:
        resolved = resolve_abandoned(
            database, settings.decision_timeout_seconds, settings.abandoned_tie_action
        )
    finally:
        database.dispose()
    if args.json:
        print_json(
            {
                "action": settings.abandoned_tie_action,
                "timeout_seconds": settings.decision_timeout_seconds,
                "resolved": [asdict(r) for r in resolved],
            }
        )
        return EXIT_OK
    out = sys.stdout.write
    out(f"{len(resolved)} abandoned hands\n")
    for r in resolved:
        result = f" -> {r.outcome}, net {r.net}" if r.outcome else ""
        out(f"  hand {r.hand_id}: {r.resolution} ({r.reason}){result}\n")
    return EXIT_OK
