"""Where a unit of work should wait on its database, in one run: `python -m benchmarks.drivers
[--statements 11] [--python-ms 0.5] [--callers 8] [--rounds 3] [--seconds 6] [--warmup 1]
[--no-sqlite] [--no-postgres] [--postgres-url URL]`.

A request's unit of work can run on the event loop with the blocking driver, in a worker
thread with the blocking driver (the loop serving others meanwhile), or on the loop with an
asynchronous driver (psycopg's `AsyncConnection`, `aiosqlite`); on PostgreSQL also the
blocking unit unchanged, on SQLAlchemy's asyncio engine (`greenlet_spawn`). They differ only
in how each round trip is waited for, so this loads each with the same transactions and
nothing else: `--callers` asyncio tasks on uvloop (as `api.server` serves), each in a closed
loop of units of `--statements` round trips (BEGIN, a row locked, then updates, inserts and
reads of it in turn, COMMIT) with `--python-ms` of CPU spent in Python between them, on a
fresh database, the variants taking turns round after round.

For each it reports the process's CPU per unit (every thread, user and system), PostgreSQL's
(every `postgres` process), and units/s. The hand path's Python is the same whichever way it
waits, so what differs here is what each way adds per unit, against a unit's whole cost in
the service (`benchmarks.hot_path`).

SQLite has one writer, so its units take turns on one kept connection in every variant, as
the service's do (`api.db.kept.SqliteWriter`); PostgreSQL's run side by side, a
connection per caller, as the pool gives them.
"""

import argparse
import asyncio
import json
import sqlite3
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractAsyncContextManager, AsyncExitStack, ExitStack, asynccontextmanager
from dataclasses import dataclass
from typing import Any, Literal

import aiosqlite
import psycopg
import uvloop
from sqlalchemy import make_url
from sqlalchemy.ext.asyncio import create_async_engine
from sqlalchemy.util import greenlet_spawn

from benchmarks import cpu, scratch, stats

Unit = Callable[[int], Awaitable[None]]
"""One unit of work of the caller numbered by its argument."""
Variant = Literal["loop", "thread", "async", "greenlet"]
Blocking = Literal["loop", "thread"]


@dataclass(frozen=True, slots=True)
class Shape:
    """What a unit of work does: its round trips, and the Python run before each statement
    between BEGIN and COMMIT (a hand's own code: the deal, the hashes, the parameters)."""

    statements: int
    python_seconds: float


@dataclass(frozen=True, slots=True)
class Statements:
    """A unit's statements in one dialect's spelling (`?` or `%s` parameters)."""

    begin: str
    lock: str
    update: str
    insert: str
    read: str

    def of_unit(self, shape: Shape) -> Iterator[str]:
        """The statements between BEGIN and COMMIT, each of one parameter (the caller's
        row): the row locked first, then writes and reads of it in turn; the Python of the
        unit is run before each (on the thread that runs the unit)."""
        cycle = (self.update, self.insert, self.read)
        for index in range(shape.statements - 2):
            _working(shape.python_seconds)
            yield self.lock if index == 0 else cycle[(index - 1) % len(cycle)]


def _spelled(p: str, begin: str, for_update: str) -> Statements:
    """The statements with `p` for their parameter's placeholder."""
    return Statements(
        begin=begin,
        lock=f"SELECT n FROM bench_rows WHERE id = {p}{for_update}",
        update=f"UPDATE bench_rows SET n = n + 1 WHERE id = {p}",
        insert=f"INSERT INTO bench_log (row_id, n) VALUES ({p}, 1)",
        read=f"SELECT n FROM bench_rows WHERE id = {p}",
    )


SQLITE = _spelled("?", "BEGIN IMMEDIATE", "")
POSTGRESQL = _spelled("%s", "BEGIN", " FOR UPDATE")
_SQLITE_PRAGMAS = ("PRAGMA journal_mode=WAL", "PRAGMA synchronous=NORMAL")
"""The service's durability (`ledger.database`): a commit appends to the WAL, no fsync."""


def _schema(callers: int, *, postgresql: bool) -> list[str]:
    """A row per caller, which its units lock and update, and a log its units append to."""
    key = "SERIAL PRIMARY KEY" if postgresql else "INTEGER PRIMARY KEY AUTOINCREMENT"
    return [
        "CREATE TABLE bench_rows (id INTEGER PRIMARY KEY, n BIGINT NOT NULL)",
        f"CREATE TABLE bench_log (id {key}, row_id INTEGER NOT NULL, n BIGINT NOT NULL)",
        "INSERT INTO bench_rows (id, n) VALUES "
        + ", ".join(f"({caller}, 0)" for caller in range(callers)),
    ]


def _working(seconds: float) -> None:
    """Spend `seconds` of this thread's CPU in Python, as a request's own code would between
    two statements (the thread's clock: a thread waiting for the GIL does not advance it)."""
    until = time.thread_time() + seconds
    while time.thread_time() < until:
        pass


def _blocking_unit(
    cursor: Callable[[], Any], statements: Statements, shape: Shape
) -> Callable[[int], None]:
    """The unit on a DB-API cursor made by `cursor` for it, every result fetched."""

    def unit(caller: int) -> None:
        on = cursor()
        on.execute(statements.begin)
        for text in statements.of_unit(shape):
            on.execute(text, (caller,))
            if on.description is not None:
                on.fetchall()
        on.execute("COMMIT")

    return unit


@asynccontextmanager
async def _sqlite_variant(path: str, variant: Variant, shape: Shape) -> AsyncIterator[Unit]:
    """A SQLite unit of work of the variant, on one connection kept for the run."""
    if variant == "async":
        async with aiosqlite.connect(path, isolation_level=None) as database:
            for pragma in _SQLITE_PRAGMAS:
                await database.execute(pragma)
            turn = asyncio.Lock()

            async def on_driver(caller: int) -> None:
                async with turn:
                    await database.execute(SQLITE.begin)
                    for text in SQLITE.of_unit(shape):
                        await database.execute_fetchall(text, (caller,))
                    await database.execute("COMMIT")

            yield on_driver
        return
    connection = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    try:
        for pragma in _SQLITE_PRAGMAS:
            connection.execute(pragma)
        unit = _blocking_unit(connection.cursor, SQLITE, shape)
        with ThreadPoolExecutor(max_workers=1) as threads:
            yield _waiting(unit, _blocking(variant), threads)
    finally:
        connection.close()


def _postgresql_variant(
    url: str, variant: Variant, shape: Shape, callers: int
) -> AbstractAsyncContextManager[Unit]:
    """A PostgreSQL unit of work of the variant, on a connection per caller."""
    if variant == "async":
        return _postgresql_async(url, shape, callers)
    if variant == "greenlet":
        return _postgresql_greenlet(url, shape, callers)
    return _postgresql_blocking(url, variant, shape, callers)


def _blocking(variant: Variant) -> Blocking:
    if variant not in ("loop", "thread"):
        raise ValueError(f"{variant!r} is not a way to run a blocking driver")
    return variant


def _conninfo(url: str) -> str:
    """psycopg's spelling of a SQLAlchemy URL (which may name its driver)."""
    return make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)


@asynccontextmanager
async def _postgresql_async(url: str, shape: Shape, callers: int) -> AsyncIterator[Unit]:
    """The unit written for psycopg's `AsyncConnection`: every statement awaited."""
    async with AsyncExitStack() as opened:
        connections = [
            await opened.enter_async_context(
                await psycopg.AsyncConnection.connect(_conninfo(url), autocommit=True)
            )
            for _ in range(callers)
        ]

        async def on_driver(caller: int) -> None:
            cursor = connections[caller].cursor()
            await cursor.execute(POSTGRESQL.begin)
            for text in POSTGRESQL.of_unit(shape):
                await cursor.execute(text, (caller,))
                if cursor.description is not None:
                    await cursor.fetchall()
            await cursor.execute("COMMIT")

        yield on_driver


@asynccontextmanager
async def _postgresql_greenlet(url: str, shape: Shape, callers: int) -> AsyncIterator[Unit]:
    """The blocking unit unchanged, on SQLAlchemy's asyncio engine: run in a greenlet
    (`greenlet_spawn`), its cursor's every wait is an await of psycopg's `AsyncConnection`
    on the loop, as `AsyncSession.run_sync` runs synchronous code."""
    engine = create_async_engine(
        make_url(url).set(drivername="postgresql+psycopg"),
        isolation_level="AUTOCOMMIT",
        pool_size=callers,
    )
    async with AsyncExitStack() as opened:
        opened.push_async_callback(engine.dispose)
        pooled = [await opened.enter_async_context(engine.connect()) for _ in range(callers)]
        # Adapted cursors, made inside the greenlet: their waits are awaits.
        units = [
            _blocking_unit(each.sync_connection.connection.cursor, POSTGRESQL, shape)  # type: ignore[union-attr]
            for each in pooled
        ]

        async def in_greenlet(caller: int) -> None:
            await greenlet_spawn(units[caller], caller)

        yield in_greenlet


@asynccontextmanager
async def _postgresql_blocking(
    url: str, variant: Variant, shape: Shape, callers: int
) -> AsyncIterator[Unit]:
    """The unit on psycopg's blocking `Connection`: on the loop, or in a worker thread."""
    with ExitStack() as opened:
        connections = [
            opened.enter_context(psycopg.connect(_conninfo(url), autocommit=True))
            for _ in range(callers)
        ]
        units = [_blocking_unit(each.cursor, POSTGRESQL, shape) for each in connections]
        threads = opened.enter_context(ThreadPoolExecutor(max_workers=callers))
        yield _waiting(lambda caller: units[caller](caller), _blocking(variant), threads)


def _waiting(unit: Callable[[int], None], variant: Blocking, threads: ThreadPoolExecutor) -> Unit:
    """The blocking unit run on the loop itself, or in a worker thread while it serves on
    (`loop.run_in_executor`, as `api.db.threads` runs the service's commands, which also
    copies the caller's context variables: a few microseconds, `benchmarks.thread_hop`)."""
    if variant == "loop":

        async def on_loop(caller: int) -> None:
            unit(caller)

        return on_loop

    async def in_thread(caller: int) -> None:
        await asyncio.get_running_loop().run_in_executor(threads, unit, caller)

    return in_thread


async def _load(
    unit: Unit, callers: int, warmup: float, seconds: float, database_cpu: cpu.Meter
) -> dict[str, Any]:
    """`callers` closed loops of `unit`; the units done, and the CPU spent by this process
    and by the database's server, in the window."""
    done = 0
    running = True

    async def caller_loop(caller: int) -> None:
        nonlocal done
        while running:
            await unit(caller)
            done += 1
            # A unit on the loop never suspends; a served request yields between units.
            await asyncio.sleep(0)

    tasks = [asyncio.create_task(caller_loop(caller)) for caller in range(callers)]
    await asyncio.sleep(warmup)
    started = (done, time.perf_counter(), cpu.this_process(), database_cpu())
    await asyncio.sleep(seconds)
    ended = (done, time.perf_counter(), cpu.this_process(), database_cpu())
    running = False
    await asyncio.gather(*tasks)
    units = ended[0] - started[0]
    database = None if started[3] is None or ended[3] is None else ended[3] - started[3]
    return {
        "units": units,
        "units_per_second": round(units / (ended[1] - started[1]), 1),
        "process_cpu_ms_per_unit": _per_unit_ms(ended[2] - started[2], units),
        "database_cpu_ms_per_unit": _per_unit_ms(database, units),
    }


def _per_unit_ms(seconds: float | None, units: int) -> float | None:
    return round(1000 * seconds / units, 4) if seconds is not None and units else None


VARIANTS: dict[str, tuple[Variant, ...]] = {
    "sqlite": ("loop", "thread", "async"),
    "postgresql": ("loop", "thread", "async", "greenlet"),
}


def measure(
    database: str,
    url: str,
    *,
    shape: Shape,
    callers: int,
    rounds: int,
    warmup: float,
    seconds: float,
) -> dict[str, Any]:
    """Every variant's figures, round by round, their medians, and each against the one the
    service runs (the loop on SQLite, a worker thread on PostgreSQL)."""
    postgresql = database == "postgresql"
    path = make_url(url).database or ""
    _create_schema(_conninfo(url) if postgresql else path, callers, postgresql=postgresql)

    def variant_of(name: Variant) -> AbstractAsyncContextManager[Unit]:
        if postgresql:
            return _postgresql_variant(url, name, shape, callers)
        return _sqlite_variant(path, name, shape)

    # SQLite runs in this process: its CPU is the process's own.
    database_cpu = cpu.postgres() if postgresql else lambda: None

    async def one_round(first: int) -> dict[str, dict[str, Any]]:
        """Every variant once, starting from the `first`th: the log grows and the database
        checkpoints and vacuums as the run goes on, so no variant always comes first."""
        names = VARIANTS[database]
        figures: dict[str, dict[str, Any]] = {}
        for name in names[first:] + names[:first]:
            async with variant_of(name) as unit:
                figures[name] = await _load(unit, callers, warmup, seconds, database_cpu)
        return figures

    per_round = [uvloop.run(one_round(index % len(VARIANTS[database]))) for index in range(rounds)]
    medians = {
        name: {
            key: stats.median([figures[name][key] for figures in per_round], digits=4)
            for key in ("units_per_second", "process_cpu_ms_per_unit", "database_cpu_ms_per_unit")
        }
        for name in VARIANTS[database]
    }
    served: Variant = "thread" if postgresql else "loop"
    return {
        "database": database,
        "statements_per_unit": shape.statements,
        "python_ms_per_unit": round(1000 * shape.python_seconds * (shape.statements - 2), 3),
        "callers": callers,
        "rounds": per_round,
        "medians": medians,
        "served_with": served,
        "process_cpu_vs_served": {
            name: stats.ratio(
                medians[name]["process_cpu_ms_per_unit"],
                medians[served]["process_cpu_ms_per_unit"],
            )
            for name in VARIANTS[database]
        },
    }


def _create_schema(target: str, callers: int, *, postgresql: bool) -> None:
    """The tables of `_schema`, in the PostgreSQL database `target` names or the SQLite file
    at that path."""
    if postgresql:
        with psycopg.connect(target, autocommit=True) as server:
            for statement in _schema(callers, postgresql=True):
                server.execute(statement)
        return
    file = sqlite3.connect(target, isolation_level=None)
    try:
        file.execute("PRAGMA journal_mode=WAL")
        for statement in _schema(callers, postgresql=False):
            file.execute(statement)
    finally:
        file.close()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.drivers", description=__doc__)
    parser.add_argument("--statements", type=int, default=11, help="round trips per unit")
    parser.add_argument(
        "--python-ms",
        type=float,
        default=0.5,
        help="CPU in Python per unit, spread before its statements (a hand's own code)",
    )
    parser.add_argument("--callers", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=6.0)
    parser.add_argument("--warmup", type=float, default=1.0)
    parser.add_argument("--no-sqlite", action="store_true")
    parser.add_argument("--no-postgres", action="store_true")
    parser.add_argument("--postgres-url", default=None)
    options = parser.parse_args(argv)
    if options.statements < 4:
        parser.error("--statements: a unit needs at least BEGIN, a lock, a write and COMMIT")
    sizes = {
        "shape": Shape(options.statements, options.python_ms / 1000 / (options.statements - 2)),
        "callers": options.callers,
        "rounds": options.rounds,
        "warmup": options.warmup,
        "seconds": options.seconds,
    }
    results = []
    with ExitStack() as stack:
        if not options.no_sqlite:
            url = stack.enter_context(scratch.scratch_database("sqlite", None, "drivers"))
            results.append(measure("sqlite", url, **sizes))
        if not options.no_postgres:
            postgres, reason = scratch.find_postgres(scratch.admin_url(options.postgres_url))
            if postgres is None:
                print(f"PostgreSQL not measured: {reason}", file=sys.stderr)
            else:
                url = stack.enter_context(
                    scratch.scratch_database("postgresql", postgres, "drivers")
                )
                results.append(measure("postgresql", url, **sizes))
    json.dump(results, sys.stdout, indent=2)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
