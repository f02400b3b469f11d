"""One benchmark run: every measurement in turn, assembled into one JSON-able document.

Measurements run one after another, never overlapping, so none steals the other's CPU.
A measurement that cannot run here (no PostgreSQL, no pgbench) is reported as unavailable
with the reason, and every figure that depends on it is null; nothing crashes.

Set-up and tear-down, which cost more than the measured windows of a quick run, overlap
one another, never a measurement: each database's two servers (the service and the
do-nothing endpoint) start together, the modules that measure (SQLAlchemy's ORM, Litestar,
the service: slow to import, hence imported inside the functions that use them)
load while the first servers start, and a server stops, and its database is dropped, while
the next one is set up (`Handover`). A server started early waits idle (uvicorn only wakes
up now and then, at a negligible cost in CPU) until its turn.
"""

import importlib
import os
import platform
import sqlite3
import sys
import threading
import time
from collections.abc import Callable
from contextlib import ExitStack
from datetime import UTC, datetime
from typing import Any

from benchmarks import cpu, goals, report, scratch, servers
from benchmarks.plan import Plan

# Imported by `_import_measurements` while the first server starts, else where first used.
MEASUREMENTS = (
    "http_load",
    "history",
    "limits",
    "ledger_bench",
    "audit_bench",
    "instructions",
    "server_instructions",
    "simulation_bench",
)


def progress(message: str) -> None:
    """Progress goes to stderr: stdout carries only the result."""
    print(f"[benchmarks] {message}", file=sys.stderr, flush=True)


def _section(measure: Callable[[], dict[str, Any]], label: str) -> dict[str, Any]:
    progress(label)
    started = time.perf_counter()
    points = measure()
    progress(f"{label}: done in {time.perf_counter() - started:.1f} s")
    return {"available": True, "reason": None, "points": points}


def _nothing() -> None:
    """While later servers start: the measuring modules are loaded by then."""


def _import_measurements() -> None:
    """Load the measuring modules now, while a server starts in its own process."""
    for name in MEASUREMENTS:
        importlib.import_module(f"benchmarks.{name}")


def _unavailable(reason: str) -> dict[str, Any]:
    return {"available": False, "reason": reason, "points": {}}


class Handover:
    """Closes one phase's servers and databases in a thread while the next phase starts its own.

    Stopping a server is mostly waiting (uvicorn's supervisor looks at its signals twice a
    second, then each worker shuts down) and dropping a PostgreSQL database takes a moment;
    in sequence they cost a few seconds of every run. They overlap only the next phase's
    set-up (its servers' start-up, its players, pgbench's initialisation), never a
    measurement: every phase calls `settle` before it measures anything.
    """

    def __init__(self) -> None:
        self._closing: threading.Thread | None = None
        self._failure: BaseException | None = None

    def release(self, resources: ExitStack) -> None:
        """Close `resources` in the background, once whatever was released before is closed
        (if closing that failed, the failure is raised here, and `resources` still close)."""

        def close() -> None:
            try:
                resources.close()
            except BaseException as error:  # handed to the main thread by settle()
                self._failure = error

        try:
            self.settle()
        finally:
            self._closing = threading.Thread(target=close, name="benchmark-teardown")
            self._closing.start()

    def settle(self) -> None:
        """Wait until everything released is closed; raise what closing it raised."""
        if self._closing is not None:
            self._closing.join()
            self._closing = None
        failure, self._failure = self._failure, None
        if failure is not None:
            raise failure


SERVICE_SECTIONS = ("http", "deposits", "history", "noop")
"""What is measured per database: hands, deposits and the history point on the service,
and the do-nothing endpoint served the same way."""


def _database_sections(
    db: str,
    postgres: scratch.PostgresServer | None,
    workers: int,
    plan: Plan,
    handover: Handover,
    while_starting: Callable[[], None],
) -> dict[str, dict[str, Any]]:
    """The do-nothing endpoint, then hands, deposits and the history point through
    `casino-war serve` on a fresh database of kind `db`, both servers with the same worker
    count; each section by its name in `SERVICE_SECTIONS`.

    Both servers start together (each spends a while importing its code, much of it on one
    CPU), with `while_starting` run meanwhile; the service then waits, idle,
    while the do-nothing endpoint is measured, and the do-nothing server stops while the
    service's players are set up. Whatever is measured, nothing else is working.
    """
    from benchmarks import history, http_load

    with ExitStack() as service_resources:
        url = service_resources.enter_context(scratch.scratch_database(db, postgres, "http"))
        service = service_resources.enter_context(servers.casino_war(url, workers))
        with ExitStack() as noop_resources:
            endpoint = noop_resources.enter_context(servers.noop(workers))
            while_starting()
            endpoint.wait_ready()
            service.wait_ready()
            handover.settle()
            noop = _section(
                lambda: http_load.noop_curve(endpoint.base_url, plan, _meters(endpoint, None)),
                f"do-nothing endpoint, {workers} worker(s) (as for {db})",
            )
            noop["idle_request_ms"] = http_load.idle_latency_ms(endpoint.base_url)
            noop["served_with"] = endpoint.served_with()
            handover.release(noop_resources.pop_all())
        meters = _meters(service, db)
        progress(f"{max(plan.clients)} players through the API on {db}")
        load = http_load.set_up(service.base_url, url, plan)
        handover.settle()
        sections = {
            "http": _section(
                lambda: http_load.hands_curve(load, plan, meters),
                f"HTTP hands on {db}, {workers} worker(s)",
            ),
            "deposits": _section(
                lambda: http_load.deposits_curve(load, plan, meters),
                f"HTTP deposits on {db}, {workers} worker(s)",
            ),
        }
        sections["http"]["idle_request_ms"] = http_load.idle_latency_ms(service.base_url)
        progress(f"history: {db} filled to {plan.history_hands:,} hands, then hands again")
        sections["history"] = history.history_section(load, url, plan, meters)
        for section in sections.values():
            section["served_with"] = service.served_with()
        handover.release(service_resources.pop_all())
    sections["noop"] = noop
    for section in sections.values():
        section["workers"] = workers
    return sections


def _meters(server: servers.Server, database: str | None) -> dict[str, cpu.Meter]:
    """Whose CPU a load point reads: the server's processes, PostgreSQL's when the load
    runs against it, and the load generator's (this process)."""
    meters = {"server": cpu.process_group(server.pid), "load_generator": cpu.this_process}
    if database == "postgresql":
        meters["database"] = cpu.postgres()
    return meters


def _http_sections(
    plan: Plan,
    postgres: scratch.PostgresServer | None,
    databases: list[str],
    handover: Handover,
) -> dict[str, dict[str, Any]]:
    """Each of `SERVICE_SECTIONS` on each database, measured one at a time: section name ->
    database -> section.

    The measuring modules are imported while the first servers start.
    """
    workers = {"sqlite": plan.sqlite_workers, "postgresql": plan.postgresql_workers}
    sections: dict[str, dict[str, Any]] = {name: {} for name in SERVICE_SECTIONS}
    while_starting = _import_measurements
    for db in plan.databases:
        if db not in databases:
            measured = {name: _unavailable("PostgreSQL is not available") for name in sections}
        else:
            measured = _database_sections(db, postgres, workers[db], plan, handover, while_starting)
            while_starting = _nothing
        for name, section in measured.items():
            sections[name][db] = section
    return sections


def _pgbench_section(
    plan: Plan,
    postgres: scratch.PostgresServer | None,
    unavailable: list[str],
    handover: Handover,
) -> dict[str, Any]:
    """pgbench on a scratch database; the last server stops while pgbench initialises it."""
    from benchmarks import limits

    pgbench_path = limits.find_pgbench()
    if postgres is None:
        return _unavailable("PostgreSQL is not available")
    if pgbench_path is None:
        pgbench = _unavailable("pgbench not found in /usr/lib/postgresql/*/bin or PATH")
        unavailable.append(pgbench["reason"])
        return pgbench
    with postgres.scratch("pgbench") as url:
        try:
            pgbench = _section(
                lambda: limits.pgbench_curve(pgbench_path, url, plan, handover.settle),
                "pgbench TPC-B",
            )
        except RuntimeError as error:
            pgbench = _unavailable(str(error))
            unavailable.append(str(error))
            return pgbench
    pgbench["scale"] = plan.pgbench_scale
    pgbench["path"] = pgbench_path
    return pgbench


def _sqlite_raw_section(plan: Plan) -> dict[str, Any]:
    """The raw SQLite limit: TPC-B-shaped transactions through `sqlite3`."""
    from benchmarks import limits

    sqlite_raw = _section(lambda: limits.sqlite_curve(plan), "raw SQLite TPC-B-shaped")
    sqlite_raw["scale"] = limits.SQLITE_SCALE
    return sqlite_raw


def _ledger_sections(
    plan: Plan, postgres: scratch.PostgresServer | None, databases: list[str]
) -> dict[str, Any]:
    """Ledger postings on a fresh database of each kind (None where not available)."""
    from benchmarks import ledger_bench

    ledger: dict[str, Any] = {}
    for db in plan.databases:
        if db not in databases:
            ledger[db] = None
            continue
        progress(f"ledger postings on {db}")
        with scratch.scratch_database(db, postgres, "ledger") as url:
            ledger[db] = ledger_bench.postings(url, plan)
    return ledger


def _audit_section(plan: Plan, unavailable: list[str]) -> dict[str, Any]:
    """The audit on a SQLite database grown through the service functions, then, in full
    runs, its cost counted in instructions on the same database."""
    from benchmarks import audit_bench

    progress(f"audit: growing a SQLite database to {plan.audit_sizes[-1]:,} hands")
    with scratch.sqlite_scratch("audit") as url:
        audit = audit_bench.audit_curve(url, plan)
        audit["instructions"] = _audit_instructions(url, plan, unavailable)
    audit["database"] = "sqlite"
    return audit


def _audit_instructions(url: str, plan: Plan, unavailable: list[str]) -> dict[str, Any] | None:
    """Instructions per audited hand (`benchmarks.instructions`) on the audit's database: a
    figure the host's other tenants do not move (each run's fresh database deals other
    cards, so two runs' figures differ slightly). None in short runs, and when it
    cannot be counted (no valgrind), with the reason in `unavailable`."""
    from benchmarks import instructions

    hands = plan.audit_instruction_hands
    if hands is None:
        return None
    larger = instructions.GROWTH * hands
    progress(f"audit: counting instructions over {hands:,} and {larger:,} hands")
    try:
        return instructions.count_audit(url, hands)
    except RuntimeError as error:
        unavailable.append(f"the audit's instructions were not counted: {error}".splitlines()[0])
        return None


def _served_instructions(plan: Plan, unavailable: list[str]) -> dict[str, Any] | None:
    """A served SQLite hand's user-space instructions against a do-nothing request's
    (`benchmarks.server_instructions`): beside the CPU goal, a figure that the host's speed
    and its other tenants barely move (the kernel's work, most of a do-nothing request's, is
    not counted). None in short runs and without SQLite; where it cannot be counted, None
    and the reason in `unavailable`, so that a run near its end is not lost to it."""
    from benchmarks import server_instructions

    if plan.served_instruction_hands is None or "sqlite" not in plan.databases:
        return None
    small, large = plan.served_instruction_hands
    progress(f"served instructions: SQLite's hot path and a do-nothing request, {small}, {large}")
    try:
        return server_instructions.measure(small, large, ("hot_path",))
    # Whatever stopped a count (no valgrind, a server failing under it, its clients' set-up),
    # the run's other figures stand.
    except Exception as error:
        unavailable.append(f"the served instructions were not counted: {error}".splitlines()[0])
        return None


def _simulation_section(plan: Plan) -> dict[str, Any]:
    """The engine alone: `casino.simulate`."""
    from benchmarks import simulation_bench

    progress(f"simulation of {plan.simulation_hands:,} hands")
    return simulation_bench.simulation(plan)


def _settings(plan: Plan, workers: dict[str, int]) -> dict[str, Any]:
    """The plan's sizes, as the document reports them."""
    return {
        "duration_seconds": plan.duration_seconds,
        "warmup_seconds": plan.warmup_seconds,
        "clients": list(plan.clients),
        "workers": {db: workers[db] for db in plan.databases},
        "bet": plan.bet,
        "pgbench_scale": plan.pgbench_scale,
        "audit_sizes": list(plan.audit_sizes),
        "audit_instruction_hands": plan.audit_instruction_hands,
        "served_instruction_hands": (
            list(plan.served_instruction_hands) if plan.served_instruction_hands else None
        ),
        "simulation_hands": plan.simulation_hands,
        "cashier_amount": plan.cashier_amount,
        "history_hands": plan.history_hands,
        "history_clients": plan.history_clients,
    }


def run(plan: Plan, postgres_url: str | None) -> dict[str, Any]:
    """Run every measurement of `plan`; the whole result document."""
    began = time.perf_counter()
    started_at = datetime.now(UTC).isoformat(timespec="seconds")
    unavailable: list[str] = []
    postgres: scratch.PostgresServer | None = None
    if "postgresql" in plan.databases:
        postgres, why = scratch.find_postgres(postgres_url)
        if why:
            unavailable.append(why)
    databases = [db for db in plan.databases if db == "sqlite" or postgres is not None]
    workers = {"sqlite": plan.sqlite_workers, "postgresql": plan.postgresql_workers}
    handover = Handover()
    try:
        service = _http_sections(plan, postgres, databases, handover)
        pgbench = _pgbench_section(plan, postgres, unavailable, handover)
    finally:
        handover.settle()
    sqlite_raw = _sqlite_raw_section(plan)
    ledger = _ledger_sections(plan, postgres, databases)
    audit = _audit_section(plan, unavailable)
    served_instructions = _served_instructions(plan, unavailable)
    simulation = _simulation_section(plan)

    document: dict[str, Any] = {
        "mode": plan.mode,
        "started_at": started_at,
        "machine": {
            "cpus": os.cpu_count(),
            "platform": platform.platform(),
            "python": platform.python_version(),
            "sqlite": sqlite3.sqlite_version,
            "postgresql": postgres.version() if postgres else None,
        },
        "settings": _settings(plan, workers),
        "http": service["http"],
        "deposits": service["deposits"],
        "history": service["history"],
        "limits": {"pgbench": pgbench, "sqlite_raw": sqlite_raw, "noop_http": service["noop"]},
        "ledger": ledger,
        "audit": audit,
        "served_instructions": served_instructions,
        "simulation": simulation,
        "unavailable": unavailable,
    }
    document["ratios"] = report.ratios(document, [str(c) for c in plan.clients])
    document["goals"] = goals.goals(document)
    document["seconds"] = round(time.perf_counter() - began, 1)
    return document
