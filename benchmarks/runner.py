"""One benchmark run: every measurement in turn, assembled into one JSON-able document.

Measurements run one after another, never overlapping, so none steals the other's CPU.
A measurement that cannot run here (no PostgreSQL, no pgbench) is reported as unavailable
with the reason, and every figure that depends on it is null; nothing crashes.
"""

import os
import platform
import sqlite3
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from benchmarks import (
    audit_bench,
    http_load,
    ledger_bench,
    limits,
    report,
    scratch,
    servers,
    simulation_bench,
)
from benchmarks.plan import Plan


def progress(message: str) -> None:
    """Progress goes to stderr: stdout carries only the result."""
    print(f"[benchmarks] {message}", file=sys.stderr, flush=True)


def _section(measure: Callable[[], dict[str, Any]], label: str) -> dict[str, Any]:
    progress(label)
    started = time.perf_counter()
    points = measure()
    progress(f"{label}: done in {time.perf_counter() - started:.1f} s")
    return {"available": True, "reason": None, "points": points}


def _unavailable(reason: str) -> dict[str, Any]:
    return {"available": False, "reason": reason, "points": {}}


def _service_section(
    db: str, postgres: scratch.PostgresServer | None, workers: int, plan: Plan
) -> dict[str, Any]:
    """Hands through `casino-war serve` on a fresh database of kind `db`."""
    with (
        scratch.scratch_database(db, postgres, "http") as url,
        servers.casino_war(url, workers) as server,
    ):
        section = _section(
            lambda: http_load.hands_curve(server.base_url, url, plan),
            f"HTTP hands on {db}, {workers} worker(s)",
        )
        section["idle_request_ms"] = http_load.idle_latency_ms(server.base_url)
    section["workers"] = workers
    return section


def _noop_section(db: str, workers: int, plan: Plan) -> dict[str, Any]:
    """The do-nothing endpoint, served with the worker count used for `db`."""
    with servers.noop(workers) as server:
        section = _section(
            lambda: http_load.noop_curve(server.base_url, plan),
            f"do-nothing endpoint, {workers} worker(s) (as for {db})",
        )
        section["idle_request_ms"] = http_load.idle_latency_ms(server.base_url)
    section["workers"] = workers
    return section


def run(plan: Plan, postgres_url: str | None) -> dict[str, Any]:
    """Run every measurement of `plan`; the whole result document."""
    began = time.perf_counter()
    unavailable: list[str] = []
    postgres: scratch.PostgresServer | None = None
    if "postgresql" in plan.databases:
        postgres, why = scratch.find_postgres(postgres_url)
        if why:
            unavailable.append(why)
    databases = [db for db in plan.databases if db == "sqlite" or postgres is not None]
    workers = {"sqlite": plan.sqlite_workers, "postgresql": plan.postgresql_workers}

    http: dict[str, Any] = {}
    noop: dict[str, Any] = {}
    for db in plan.databases:
        if db not in databases:
            http[db] = noop[db] = _unavailable("PostgreSQL is not available")
            continue
        http[db] = _service_section(db, postgres, workers[db], plan)
        noop[db] = _noop_section(db, workers[db], plan)

    pgbench_path = limits.find_pgbench()
    if postgres is None:
        pgbench = _unavailable("PostgreSQL is not available")
    elif pgbench_path is None:
        pgbench = _unavailable("pgbench not found in /usr/lib/postgresql/*/bin or PATH")
        unavailable.append(pgbench["reason"])
    else:
        with postgres.scratch("pgbench") as url:
            try:
                pgbench = _section(
                    lambda: limits.pgbench_curve(pgbench_path, url, plan), "pgbench TPC-B"
                )
                pgbench["scale"] = plan.pgbench_scale
                pgbench["path"] = pgbench_path
            except RuntimeError as error:
                pgbench = _unavailable(str(error))
                unavailable.append(str(error))
    sqlite_raw = _section(lambda: limits.sqlite_curve(plan), "raw SQLite TPC-B-shaped")
    sqlite_raw["scale"] = limits.SQLITE_SCALE

    ledger: dict[str, Any] = {}
    for db in plan.databases:
        if db not in databases:
            ledger[db] = None
            continue
        progress(f"ledger postings on {db}")
        with scratch.scratch_database(db, postgres, "ledger") as url:
            ledger[db] = ledger_bench.postings(url, plan)

    progress(f"audit: growing a SQLite database to {plan.audit_sizes[-1]:,} hands")
    with scratch.sqlite_scratch("audit") as url:
        audit = audit_bench.audit_curve(url, plan)
    audit["database"] = "sqlite"

    progress(f"simulation of {plan.simulation_hands:,} hands")
    simulation = simulation_bench.simulation(plan)

    document: dict[str, Any] = {
        "mode": plan.mode,
        "started_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": {
            "cpus": os.cpu_count(),
            "platform": platform.platform(),
            "python": platform.python_version(),
            "sqlite": sqlite3.sqlite_version,
            "postgresql": postgres.version() if postgres else None,
        },
        "settings": {
            "duration_seconds": plan.duration_seconds,
            "warmup_seconds": plan.warmup_seconds,
            "clients": list(plan.clients),
            "workers": {db: workers[db] for db in plan.databases},
            "bet": plan.bet,
            "pgbench_scale": plan.pgbench_scale,
            "audit_sizes": list(plan.audit_sizes),
            "simulation_hands": plan.simulation_hands,
        },
        "http": http,
        "limits": {"pgbench": pgbench, "sqlite_raw": sqlite_raw, "noop_http": noop},
        "ledger": ledger,
        "audit": audit,
        "simulation": simulation,
        "unavailable": unavailable,
    }
    document["ratios"] = report.ratios(document, [str(c) for c in plan.clients])
    document["goals"] = report.goals(document)
    document["seconds"] = round(time.perf_counter() - began, 1)
    return document
