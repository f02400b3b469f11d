"""Audit replay throughput on a database that grows to at least 100,000 hands, and memory.

Hands are written by the service functions themselves (`open_hand`, `decide_hand` going to
war on a tie), many per database transaction, so the records and ledger transactions are
exactly what the API writes, minus HTTP. At each size the audit is timed on its own, then
run again under tracemalloc for its peak (and the process RSS is read): flat figures as the
database grows mean the audit streams rather than loads everything.

The audit is `api.services.audit.audit_hands` when that module exists; until then, a replay
loop over the hand records with `api.services.hands.replay`, comparing outcome and net.
"""

import gc
import importlib
import inspect
import itertools
import resource
import time
import tracemalloc
from collections.abc import Callable
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

import migrations
from api.db.database import Database
from api.db.models import HandRecord, SeedPair
from api.services import cashier, players, tables
from api.services import hands as hand_service
from benchmarks.plan import Plan
from benchmarks.stats import rate
from casino.hand import Action

GENERATION_BATCH = 2_000
PLAYERS = 16
CURRENCY = "USD"
MIB = 1024 * 1024

Audit = Callable[[Database], tuple[int, int | None]]  # (mismatches, hands it checked)


# Generating hands ------------------------------------------------------------------------


class HandFactory:
    """Appends settled hands to a migrated database through the service functions."""

    def __init__(self, database: Database, plan: Plan) -> None:
        self._database = database
        self._bet = plan.bet
        with database.transaction() as session:
            tables.ensure_standard_table(session, CURRENCY)
        with database.transaction() as session:
            self._table_id = next(t.id for t in tables.list_tables(session, None, 50).items)
            self._players = []
            for number in range(PLAYERS):
                created = players.create_player(session, f"audit {number}", None)
                cashier.deposit(session, created.id, plan.deposit, CURRENCY, CURRENCY)
                self._players.append(created.id)
        self._turn = itertools.cycle(self._players)
        self.hands = 0
        self.seconds = 0.0

    def grow_to(self, total: int) -> None:
        started = time.perf_counter()
        while self.hands < total:
            batch = min(GENERATION_BATCH, total - self.hands)
            with self._database.transaction() as session:
                for _ in range(batch):
                    self._play(session, next(self._turn))
            self.hands += batch
        self.seconds += time.perf_counter() - started

    def _play(self, session: Session, player_id: int) -> None:
        view = hand_service.open_hand(session, player_id, self._table_id, self._bet, 0)
        if view.status == "awaiting_decision":
            hand_service.decide_hand(session, view.id, Action.WAR, player_id=player_id)


# Auditing --------------------------------------------------------------------------------


def replay_loop(database: Database) -> tuple[int, int | None]:
    """Re-derive every settled hand from its seeds and compare; (mismatches, hands)."""
    mismatches = 0
    checked = 0
    with database.sessions() as session:
        query = (
            select(HandRecord, SeedPair)
            .join(SeedPair, SeedPair.id == HandRecord.seed_pair_id)
            .where(HandRecord.status == "settled")
            .order_by(HandRecord.id)
            .execution_options(yield_per=2_000)
        )
        for record, pair in session.execute(query).tuples():
            hand = hand_service.replay(record, pair)
            checked += 1
            if hand.net != record.net or (hand.outcome and hand.outcome.value) != record.outcome:
                mismatches += 1
    return mismatches, checked


def find_audit() -> tuple[str, Audit]:
    """The service's audit function if it is there and callable with the database alone."""
    try:
        module = importlib.import_module("api.services.audit")
        function = module.audit_hands
    except (ImportError, AttributeError):
        return "api.services.hands.replay loop", replay_loop
    return "api.services.audit.audit_hands", _adapt(function)


def _adapt(function: Callable[..., Any]) -> Audit:
    """Call `audit_hands` with what its first parameter asks for (database, session...)."""
    first = next(iter(inspect.signature(function).parameters.values()))
    wanted = str(first.annotation)

    def audit(database: Database) -> tuple[int, int | None]:
        if "Session" in wanted:
            with database.sessions() as session:
                return _problems(function(session))
        if "Connection" in wanted:
            with database.engine.connect() as connection:
                return _problems(function(connection))
        if "Engine" in wanted:
            return _problems(function(database.engine))
        return _problems(function(database))

    return audit


def _problems(result: Any) -> tuple[int, int | None]:
    """(discrepancies, hands checked) from whatever the audit returns (best effort)."""
    checked = getattr(result, "hands_checked", None)
    for name in ("mismatches", "discrepancies", "problems", "differences"):
        value = getattr(result, name, None)
        if value is not None:
            return (value if isinstance(value, int) else len(value)), checked
    return 0, checked


def _rss_bytes() -> int:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * resource.getpagesize()


def _measure(database: Database, hands: int, audit: Audit) -> dict[str, Any]:
    gc.collect()
    started = time.perf_counter()
    mismatches, checked = audit(database)
    elapsed = time.perf_counter() - started
    gc.collect()
    tracemalloc.start()
    audit(database)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return {
        "hands": hands,
        "seconds": round(elapsed, 3),
        "hands_per_second": rate(hands, elapsed),
        "hands_checked": checked,
        "mismatches": mismatches,
        "peak_traced_mib": round(peak / MIB, 2),
        "rss_mib": round(_rss_bytes() / MIB, 1),
    }


def audit_curve(database_url: str, plan: Plan) -> dict[str, Any]:
    """Grow the database through `plan.audit_sizes`, auditing (and weighing) at each size."""
    migrations.upgrade(database_url)
    database = Database.connect(database_url)
    name, audit = find_audit()
    try:
        factory = HandFactory(database, plan)
        points: dict[str, dict[str, Any]] = {}
        for size in plan.audit_sizes:
            factory.grow_to(size)
            points[str(size)] = _measure(database, size, audit)
    finally:
        database.dispose()
    peaks = [point["peak_traced_mib"] for point in points.values()]
    return {
        "function": name,
        "generated_hands": factory.hands,
        "generation_hands_per_second": rate(factory.hands, factory.seconds),
        "sizes": points,
        "memory_growth": round(peaks[-1] / peaks[0], 3) if peaks and peaks[0] else None,
    }
