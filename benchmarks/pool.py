"""The database pool's size against connection churn, in one run: `python -m benchmarks.pool
[--sizes 5 10] [--clients 8] [--rounds 3] [--seconds S]`.

One `casino-war serve` on PostgreSQL (the main benchmark's workers) per pool size
(`CASINO_WAR_DATABASE_POOL_SIZE`), each on a fresh database, loaded with hands in turn,
round after round, by the main benchmark's closed loop (`benchmarks.http_load`). For each
window: the connections the database saw opened (`pg_stat_database.sessions`, PostgreSQL 14
or newer), failed requests, hands/s, p99, and the CPU per hand of the server and of
PostgreSQL (whose count includes the backends that ended in the window: a connection closed
takes its process's CPU to the postmaster's children's count, which the meter reads).

A pool that opens a connection past its size at a peak and closes it when it is returned
costs PostgreSQL a server process forked, authenticated and ended each time. The service's
pool opens none past its size (`api.db.database`): this shows that no load makes it open
any, and what the size does to throughput and latency.
"""

import argparse
import json
import sys
from contextlib import ExitStack
from dataclasses import replace
from typing import Any

from sqlalchemy import create_engine, make_url, text
from sqlalchemy.pool import NullPool

from benchmarks import cpu, http_load, scratch, servers, stats
from benchmarks.plan import FULL, Plan
from ledger.database import normalize_url


def _sessions_opened(admin_url: str, database: str) -> int:
    """Connections opened to `database` since the server's statistics began."""
    engine = create_engine(normalize_url(admin_url), poolclass=NullPool)
    try:
        with engine.connect() as connection:
            opened = connection.execute(
                text("SELECT sessions FROM pg_stat_database WHERE datname = :name"),
                {"name": database},
            ).scalar_one()
            return int(opened)
    finally:
        engine.dispose()


def _window(
    postgres: scratch.PostgresServer,
    url: str,
    service: http_load.Service,
    plan: Plan,
    server: servers.Server,
) -> dict[str, Any]:
    database = make_url(url).database or ""
    meters = {"server": cpu.process_group(server.pid), "postgresql": cpu.postgres()}
    before = _sessions_opened(postgres.admin_url, database)
    point = http_load.hands_point(service, plan, max(plan.clients), meters)
    opened = _sessions_opened(postgres.admin_url, database) - before
    return {
        "connections_opened": opened,
        "connections_opened_per_1000_hands": round(1000 * opened / point["units"], 1)
        if point["units"]
        else None,
        "errors": point["errors"],
        "hands_per_second": point["hands_per_second"],
        "p99_ms": point["latency_ms"]["p99"],
        "server_cpu_ms_per_hand": point["cpu_ms_per_unit"]["server"],
        "postgresql_cpu_ms_per_hand": point["cpu_ms_per_unit"]["postgresql"],
    }


def measure(
    postgres: scratch.PostgresServer, plan: Plan, sizes: list[int], rounds: int
) -> dict[str, Any]:
    """Every figure of every round, per pool size, and each figure's median over the rounds."""
    with ExitStack() as stack:
        launched: dict[int, tuple[str, http_load.Service, servers.Server]] = {}
        for size in sizes:
            url = stack.enter_context(postgres.scratch(f"pool{size}"))
            command = [*servers.casino_war_command(), "serve"]
            command += ["--workers", str(plan.postgresql_workers)]
            env = {"CASINO_WAR_DATABASE_URL": url, "CASINO_WAR_DATABASE_POOL_SIZE": str(size)}
            server = stack.enter_context(servers.launched(command, env, "/ready"))
            server.wait_ready()
            launched[size] = (url, http_load.set_up(server.base_url, url, plan), server)
        windows: dict[int, list[dict[str, Any]]] = {size: [] for size in sizes}
        for _ in range(rounds):
            for size, (url, service, server) in launched.items():
                windows[size].append(_window(postgres, url, service, plan, server))
    return {
        "workers": plan.postgresql_workers,
        "clients": max(plan.clients),
        "rounds": rounds,
        "per_round": {str(size): rows for size, rows in windows.items()},
        "median": {str(size): _medians(rows) for size, rows in windows.items()},
    }


def _medians(rows: list[dict[str, Any]]) -> dict[str, float | None]:
    medians: dict[str, float | None] = {}
    for key in rows[0]:
        medians[key] = stats.median([row[key] for row in rows])
    return medians


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.pool", description=__doc__)
    parser.add_argument("--sizes", type=int, nargs="+", default=[5, 10])
    parser.add_argument("--clients", type=int, default=FULL.history_clients)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=FULL.duration_seconds)
    parser.add_argument("--postgres-url", default=None)
    options = parser.parse_args(argv)
    postgres, reason = scratch.find_postgres(scratch.admin_url(options.postgres_url))
    if postgres is None:
        parser.error(f"PostgreSQL not measured: {reason}")
    plan = replace(FULL, duration_seconds=options.seconds, clients=(options.clients,))
    json.dump(measure(postgres, plan, options.sizes, options.rounds), sys.stdout, indent=2)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
