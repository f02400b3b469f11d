"""`casino-war audit`: replay every hand of a period and check the whole ledger.

Hands are selected by `created_at`, in gaming days (`CASINO_WAR_GAMING_DAY_TIMEZONE`,
`CASINO_WAR_GAMING_DAY_START_HOUR`), both dates inclusive; with no dates, every hand. The
ledger checks always cover the whole ledger (a hash chain cannot be checked in part). Exit 1
naming every hand or ledger row that does not match, 0 when clean.

Hands are replayed by `--jobs` processes (default: one per CPU) in id ranges of `--chunk`
hands; the ledger checks run here. A period of at most one chunk is replayed in process.
"""

import argparse
import os
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import date, datetime
from typing import Any

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeRemainingColumn,
)
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from api.cli.common import (
    EXIT_OK,
    EXIT_PROBLEM,
    Subparsers,
    UsageError,
    counted,
    examples,
    iso_day,
    positive_int,
    print_json,
)
from api.db.database import Database
from api.db.snapshot import read_snapshot
from api.domain.audit.integrity import audit_period
from api.domain.audit.parallel import CHUNK
from api.domain.audit.reads import count_hands
from api.domain.audit.results import CasinoProblem, PeriodAudit
from api.domain.audit.schemas import PeriodAuditReport
from api.domain.events.service import EventsCheck, record_event, verify_events
from api.domain.reports.gaming_day import day_start
from api.settings import get_settings
from ledger.report import LedgerProblem
from ledger.schema import transactions


def register(subparsers: Subparsers) -> None:
    audit = subparsers.add_parser(
        "audit",
        help="replay every hand in the range and check the ledger",
        description="Replay every hand created in the range (gaming days, inclusive) from "
        "its seeds and recorded rules, compare it with its record and its ledger "
        "transactions, and verify the whole ledger. Exit 1 on any discrepancy.",
        **examples(
            "casino-war audit",
            "casino-war audit --from 2026-11-01 --to 2026-11-30 --jobs 4 --json > audit.json",
        ),
    )
    audit.add_argument("--from", dest="first", type=iso_day, help="first gaming day")
    audit.add_argument("--to", dest="last", type=iso_day, help="last gaming day, inclusive")
    audit.add_argument("--json", action="store_true", help="print one JSON document")
    audit.add_argument(
        "--jobs",
        type=positive_int,
        default=os.cpu_count() or 1,
        help="processes replaying hands; 1: all in this process (default: CPUs, %(default)s)",
    )
    audit.add_argument(
        "--chunk",
        type=positive_int,
        default=CHUNK,
        help="hands per unit of work handed to a process (%(default)s)",
    )
    audit.set_defaults(handler=_audit)


@contextmanager
def _progress(enabled: bool) -> Iterator[Progress]:
    progress = Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
        console=Console(stderr=True),
        transient=True,
        disable=not enabled,
    )
    with progress:
        yield progress


def _range(args: argparse.Namespace) -> tuple[datetime | None, datetime | None]:
    settings = get_settings()
    if args.first and args.last and args.first > args.last:
        raise UsageError("--from must not be after --to")
    zone, hour = settings.time_zone, settings.gaming_day_start_hour
    start = day_start(args.first, zone, hour) if args.first else None
    end = day_start(date.fromordinal(args.last.toordinal() + 1), zone, hour) if args.last else None
    return start, end


def _audit(args: argparse.Namespace) -> int:
    start, end = _range(args)
    database = Database.connect(get_settings().database_url)
    try:
        with read_snapshot(database.engine) as connection, _progress(True) as progress:
            hand_total = count_hands(connection, start, end)
            txn_total = connection.execute(
                select(func.count()).select_from(transactions)
            ).scalar_one()
            hands_task = progress.add_task("replaying hands", total=hand_total)
            ledger_task = progress.add_task("verifying ledger", total=int(txn_total))

            def advance(task: TaskID) -> Any:
                return lambda done: progress.update(task, completed=done)

            result = audit_period(
                connection,
                start,
                end,
                advance(hands_task),
                advance(ledger_task),
                jobs=args.jobs,
                chunk=args.chunk,
            )
            with Session(bind=connection) as session:
                events = verify_events(session)
        ok = result.ok and events.ok
        _record_run(database, args, result, events)
    finally:
        database.dispose()
    if args.json:
        report = PeriodAuditReport.model_validate(result, from_attributes=True)
        document = report.model_dump(mode="json", exclude_unset=True)
        print_json({**document, "ok": ok, "events": _events_document(events)})
    else:
        _print_summary(result, events)
    return EXIT_OK if ok else EXIT_PROBLEM


def _record_run(
    database: Database, args: argparse.Namespace, result: PeriodAudit, events: EventsCheck
) -> None:
    """The audit itself is a significant event: when, over what, and what it found."""
    with database.transaction() as session:
        record_event(
            session,
            "audit_run",
            None,
            subject={
                "from": None if args.first is None else args.first.isoformat(),
                "to": None if args.last is None else args.last.isoformat(),
            },
            details={
                "ok": result.ok and events.ok,
                "hands": result.hands.hands_checked,
                "hand_mismatches": result.hands.mismatched,
                "events_ok": events.ok,
            },
        )


def _events_document(events: EventsCheck) -> dict[str, Any]:
    return {
        "events": events.events,
        "ok": events.ok,
        "problems": [{"seq": p.seq, "problem": p.problem} for p in events.problems],
    }


def _print_events(events: EventsCheck) -> None:
    out = sys.stdout.write
    out("events\n")
    if events.ok:
        out(f"  {counted(events.events, 'event')} in an unbroken hash chain\n")
        return
    out(f"  {counted(events.events, 'event')}, {counted(len(events.problems), 'problem')}\n")
    for problem in events.problems:
        out(f"  event {problem.seq}: {problem.problem}\n")


def _print_summary(result: PeriodAudit, events: EventsCheck) -> None:
    out = sys.stdout.write
    start, end = result.period.start, result.period.end
    out(
        f"hands {start.isoformat() if start else 'the beginning'} to "
        f"{end.isoformat() if end else 'now'} (UTC, by created_at)\n"
    )
    _print_hands(result)
    _print_ledger(result)
    _print_events(events)
    out(f"audit: {'clean' if result.ok and events.ok else 'DISCREPANCIES FOUND'}\n")


def _print_hands(result: PeriodAudit) -> None:
    hands = result.hands
    out = sys.stdout.write
    out(
        f"  {counted(hands.hands_checked, 'hand')} replayed ({hands.settled:,} settled, "
        f"{hands.awaiting_decision:,} awaiting a decision) in {hands.seconds:.2f} s "
        f"({hands.hands_per_second:,.0f} hands/s, {_processes(hands.jobs)}): "
        f"{hands.mismatched:,} mismatched\n"
    )
    for mismatch in hands.mismatches:
        details = "; ".join(
            f"{d.field}: recorded {d.recorded!r}, derived {d.derived!r}"
            + (f" (ledger transactions {list(d.transaction_ids)})" if d.transaction_ids else "")
            for d in mismatch.differences
        )
        out(f"  MISMATCH hand {mismatch.hand_id}: {details}\n")


def _print_ledger(result: PeriodAudit) -> None:
    ledger = result.ledger
    out = sys.stdout.write
    out("ledger\n")
    out(
        f"  {counted(ledger.hash_chain.transactions_checked, 'transaction')}, "
        f"{counted(ledger.trial_balance.entries_checked, 'entry', 'entries')}, "
        f"{counted(ledger.stored_balances.accounts_checked, 'account')}\n"
    )
    sections: tuple[tuple[str, bool, Sequence[LedgerProblem | CasinoProblem]], ...] = (
        ("hash chain", ledger.hash_chain.ok, ledger.hash_chain.problems),
        ("trial balance", ledger.trial_balance.ok, ledger.trial_balance.problems),
        ("stored balances", ledger.stored_balances.ok, ledger.stored_balances.problems),
        (
            "held for unsettled hands",
            ledger.held_for_unsettled_hands.ok,
            ledger.held_for_unsettled_hands.problems,
        ),
        ("hand references", ledger.hand_references.ok, ledger.hand_references.problems),
        ("nonce continuity", ledger.nonce_continuity.ok, ledger.nonce_continuity.problems),
    )
    for name, ok, problems in sections:
        out(f"  {name}: {'ok' if ok else 'FAILED'}\n")
        for problem in problems:
            out(_problem_line(problem))
    for other in ledger.other_problems:
        out(_problem_line(other))
    for held in ledger.held_for_unsettled_hands.by_currency:
        out(
            f"  held {held.currency}: {held.held:,} for "
            f"{counted(held.unsettled_hands, 'unsettled hand')} staking {held.unsettled_stakes:,}\n"
        )
    out("  chain heads (file them outside the database; the next audit must still contain them):\n")
    for head in ledger.hash_chain.heads:
        out(f"    chain {head.chain}: seq {head.seq} hash {head.hash}\n")


def _processes(jobs: int) -> str:
    return "in process" if jobs == 1 else f"{jobs} processes"


def _problem_line(problem: LedgerProblem | CasinoProblem) -> str:
    seq = problem.seq if isinstance(problem, LedgerProblem) else None
    shown = f" (seq {seq})" if seq is not None else ""
    return (
        f"  PROBLEM {problem.table} row {problem.row_id}{shown}: {problem.code}: {problem.detail}\n"
    )
