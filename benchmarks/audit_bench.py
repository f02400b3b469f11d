"""Audit replay throughput on a database that grows to at least 100,000 hands, and memory.

Hands are written by the service functions themselves (`open_hand`, `decide_hand` going to
war on a tie), many per database transaction, so the records and ledger transactions are
exactly what the API writes, minus HTTP. At each size the audit is timed in one process,
then run again under tracemalloc for its peak (and the process RSS is read): flat figures as
the database grows mean the audit streams rather than loads everything. Then it is timed
with one worker process per CPU (`api.domain.audit.parallel`), as `casino-war audit` runs
it by default.
"""

import gc
import itertools
import os
import resource
import time
import tracemalloc
from collections.abc import Sequence
from operator import itemgetter
from typing import Any

from sqlalchemy.orm import Session

import migrations
from api.db.database import Database
from api.db.snapshot import read_snapshot
from api.domain.audit.parallel import CHUNK, audit_hands_parallel
from api.domain.audit.reads import BATCH
from api.domain.audit.results import HandAuditResult
from api.domain.cashier import service as cashier
from api.domain.hands import service as hand_service
from api.domain.players import service as players
from api.domain.tables import service as tables
from benchmarks.plan import Plan
from benchmarks.stats import rate
from casino.hand import Action

GENERATION_BATCH = 2_000
TIMED_RUNS = 3  # per size and mode; the median run is reported
PLAYERS = 16
CURRENCY = "USD"
MIB = 1024 * 1024


# Generating hands ------------------------------------------------------------------------


class HandFactory:
    """Appends settled hands to a migrated database through the service functions.

    By default it opens the standard table and plays `PLAYERS` players of its own, each
    funded with `plan.deposit`; given `players` (funded players of a database whose standard
    table is open, e.g. those a benchmark created through the API), it plays those in turn.
    """

    def __init__(
        self, database: Database, plan: Plan, players: Sequence[int] | None = None
    ) -> None:
        self._database = database
        self._bet = plan.bet
        with database.transaction() as session:
            tables.ensure_standard_table(session, CURRENCY)
        with database.transaction() as session:
            self._table_id = next(t.id for t in tables.list_tables(session, None, 50).items)
            if players is None:
                players = [_funded_player(session, number, plan) for number in range(PLAYERS)]
        self._turn = itertools.cycle(players)
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


def _funded_player(session: Session, number: int, plan: Plan) -> int:
    created = players.create_player(session, f"audit {number}", None)
    cashier.deposit(session, created.id, plan.deposit, CURRENCY, CURRENCY)
    return created.id


# Auditing --------------------------------------------------------------------------------


def _audit(database: Database, jobs: int, chunk: int) -> HandAuditResult:
    """The period audit over every hand, in its own read snapshot, as `casino-war audit` runs
    it: `jobs` 1 in this process, more through the pool of worker processes.

    Batches are no larger than a chunk, so that a plan with small sizes (quick mode) still
    audits several batches per size and its memory figures show whether the audit streams.
    """
    with read_snapshot(database.engine) as connection:
        return audit_hands_parallel(connection, jobs=jobs, chunk=chunk, batch=min(BATCH, chunk))


def _timed(database: Database, jobs: int, chunk: int) -> tuple[float, HandAuditResult]:
    gc.collect()
    started = time.perf_counter()
    result = _audit(database, jobs, chunk)
    return time.perf_counter() - started, result


def _median_of_runs(database: Database, jobs: int, chunk: int) -> tuple[float, HandAuditResult]:
    """`TIMED_RUNS` audits; the run of median time. One run of a few seconds on a shared
    host can be a fifth off either way; the median of three is not moved by one outlier."""
    runs = sorted((_timed(database, jobs, chunk) for _ in range(TIMED_RUNS)), key=itemgetter(0))
    return runs[len(runs) // 2]


def _rss_bytes() -> int:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * resource.getpagesize()


def _measure(database: Database, hands: int, jobs: int, chunk: int) -> dict[str, Any]:
    """Single process (the median of three runs, then once under tracemalloc for its peak),
    then parallel.

    The parallel audit first runs once cold (`seconds_parallel_cold`: starting the worker
    processes and, at the first size, the fork server they are forked from, once per
    process); its figure is the median of three runs after that, as in any process that
    audits again. Memory is the single process's: a worker holds one batch at a time just
    the same.
    """
    elapsed, single = _median_of_runs(database, 1, chunk)
    gc.collect()
    tracemalloc.start()
    _audit(database, 1, chunk)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    rss = _rss_bytes()
    cold, _ = _timed(database, jobs, chunk)
    warm, parallel = _median_of_runs(database, jobs, chunk)
    return {
        "hands": hands,
        "seconds": round(elapsed, 3),
        "hands_per_second": rate(hands, elapsed),
        "hands_checked": single.hands_checked,
        "mismatches": len(single.mismatches),
        "peak_traced_mib": round(peak / MIB, 2),
        "rss_mib": round(rss / MIB, 1),
        "jobs": parallel.jobs,
        "seconds_parallel": round(warm, 3),
        "seconds_parallel_cold": round(cold, 3),
        "hands_per_second_parallel": rate(hands, warm),
        "mismatches_parallel": len(parallel.mismatches),
    }


def audit_curve(database_url: str, plan: Plan) -> dict[str, Any]:
    """Grow the database through `plan.audit_sizes`, auditing (and weighing) at each size."""
    migrations.upgrade(database_url)
    database = Database.connect(database_url)
    jobs = os.cpu_count() or 1
    chunk = plan.audit_chunk or CHUNK
    try:
        factory = HandFactory(database, plan)
        points: dict[str, dict[str, Any]] = {}
        for size in plan.audit_sizes:
            factory.grow_to(size)
            points[str(size)] = _measure(database, size, jobs, chunk)
    finally:
        database.dispose()
    peaks = [point["peak_traced_mib"] for point in points.values()]
    return {
        "function": "api.domain.audit.batch.audit_hands",
        "parallel_function": "api.domain.audit.parallel.audit_hands_parallel",
        "jobs": jobs,
        "chunk": chunk,
        "generated_hands": factory.hands,
        "generation_hands_per_second": rate(factory.hands, factory.seconds),
        "sizes": points,
        "memory_growth": round(peaks[-1] / peaks[0], 3) if peaks and peaks[0] else None,
    }
