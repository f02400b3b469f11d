"""The hot path against the framework, in one run: `python -m benchmarks.hot_path`.

Two `casino-war serve` processes, each on a fresh database of the same kind, one with
`CASINO_WAR_HOT_PATH=true` (the default) and one with `false`, the do-nothing endpoint, and
the prototypes (`_PROTOTYPES`: `benchmarks.lean_hand` and the shapes of `benchmarks.bare_hand`,
one of them on a SQLite database without the indexes only readers need) are loaded in turn,
round after round, in an order that changes every round (`round_order`), by the same closed
loop as the main benchmark (`benchmarks.http_load`): the server's CPU per hand of each, and
their ratios, measured minutes apart on the same host, so the host's other tenants weigh on
all of them alike.
"""

import argparse
import json
import sys
from collections.abc import Callable, Collection, Sequence
from contextlib import AbstractContextManager, ExitStack
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import Any

from sqlalchemy.engine import make_url

from benchmarks import bare_hand, cpu, http_load, lean_hand, scratch, servers, sqlite_floor, stats
from benchmarks.plan import FULL, Plan

_VARIANTS = {"hot_path": "true", "framework": "false"}


def _meters(server: servers.Server, *, postgresql: bool = False) -> dict[str, cpu.Meter]:
    """The server's CPU, split between its event loops and its other threads, and, with
    `postgresql`, the database's: a variant may move work from one to another."""
    meters = {
        "server": cpu.process_group(server.pid),
        "event_loops": cpu.event_loop_threads(server.pid),
        "worker_threads": cpu.worker_threads(server.pid),
    }
    if postgresql:
        meters["postgresql"] = cpu.postgres()
    return meters


def service_env(
    database_url: str, hot: str, token_cache_seconds: float | None = None
) -> dict[str, str]:
    """The settings a variant of the service is served with. A `token_cache_seconds` of a
    millisecond has every request look its caller's token up, as the requests of players
    who pause between hands do (the loaded clients play without a pause, and their tokens
    are nearly always in memory)."""
    env = {"CASINO_WAR_DATABASE_URL": database_url, "CASINO_WAR_HOT_PATH": hot}
    if token_cache_seconds is not None:
        env["CASINO_WAR_TOKEN_CACHE_SECONDS"] = str(token_cache_seconds)
    return env


def _launched(
    stack: ExitStack, env: dict[str, str], workers: int, checkout: Path | None = None
) -> servers.Server:
    """`casino-war serve`: this checkout's, or that of `checkout` (run from its own `.venv`)."""
    script = [str(checkout / ".venv" / "bin" / "casino-war")] if checkout else None
    command = [*(script or servers.casino_war_command()), "serve", "--workers", str(workers)]
    server = stack.enter_context(servers.launched(command, env, "/ready"))
    server.wait_ready()
    return server


Serving = Callable[[str, int], AbstractContextManager[servers.Server]]


@dataclass(frozen=True, slots=True)
class Prototype:
    """A prototype of the hand path, as `measure` loads it beside the service."""

    serving: Serving
    """How it is served: (database URL, worker processes)."""
    databases: tuple[str, ...]
    """The databases it is loaded on: "sqlite", "postgresql"."""
    dropped_indexes: tuple[str, ...] = ()
    """SQLite indexes dropped from its database once the service has set it up."""

    def __post_init__(self) -> None:
        if self.dropped_indexes and self.databases != ("sqlite",):
            raise ValueError("indexes are dropped from a SQLite database only")


_PROTOTYPES: dict[str, Prototype] = {
    "prototype": Prototype(lambda url, _workers: lean_hand.serving(url), ("sqlite",)),
    "bare": Prototype(bare_hand.serving, ("sqlite", "postgresql")),
    "combined": Prototype(partial(bare_hand.serving, combined=True), ("postgresql",)),
    "grouped": Prototype(partial(bare_hand.serving, grouped=True), ("sqlite",)),
    "unindexed": Prototype(
        partial(bare_hand.serving, grouped=True),
        ("sqlite",),
        dropped_indexes=sqlite_floor.READERS_ONLY_INDEXES,
    ),
    "optimistic": Prototype(partial(bare_hand.serving, optimistic=True), ("postgresql",)),
    "exchanged": Prototype(partial(bare_hand.serving, exchanged=True), ("postgresql",)),
}


SERVERS = (*_VARIANTS, "baseline", *_PROTOTYPES)
"""What `measure` can load beside the do-nothing endpoint (the baseline only when given)."""


def _prototype(
    stack: ExitStack,
    plan: Plan,
    name: str,
    database: str,
    postgres: scratch.PostgresServer | None,
    workers: int,
) -> tuple[http_load.Service, servers.Server]:
    """A prototype on a database the service set up for it."""
    url = stack.enter_context(scratch.scratch_database(database, postgres, name))
    service = lean_hand.prepared(url, plan)
    prototype = _PROTOTYPES[name]
    if prototype.dropped_indexes:
        sqlite_floor.drop_indexes(Path(make_url(url).database or ""), prototype.dropped_indexes)
    server = stack.enter_context(prototype.serving(url, workers))
    return replace(service, base_url=server.base_url), server


def measure(
    database: str,
    postgres: scratch.PostgresServer | None,
    plan: Plan,
    rounds: int,
    baseline: Path | None = None,
    token_cache_seconds: float | None = None,
    only: Collection[str] | None = None,
) -> dict[str, Any]:
    """Server CPU per hand (ms) of each variant and per do-nothing request, every round, with
    hands/s and, on PostgreSQL, the database's CPU per hand; with `baseline`, also of that
    checkout's hot path (an earlier build, say); with `token_cache_seconds`, the service's
    variants remember a token that long (`service_env`); with `only`, of those servers
    alone (`SERVERS`) and the do-nothing endpoint."""
    clients = plan.history_clients
    workers = plan.sqlite_workers if database == "sqlite" else plan.postgresql_workers
    wanted = set(SERVERS if only is None else only)
    with ExitStack() as stack:
        services = {}
        launches: list[tuple[str, str, Path | None]] = [
            (name, hot, None) for name, hot in _VARIANTS.items()
        ]
        if baseline is not None:
            launches.append(("baseline", "true", baseline))
        for name, hot, checkout in launches:
            if name not in wanted:
                continue
            url = stack.enter_context(scratch.scratch_database(database, postgres, name))
            env = service_env(url, hot, token_cache_seconds)
            server = _launched(stack, env, workers, checkout)
            services[name] = (http_load.set_up(server.base_url, url, plan), server)
        for name, prototype in _PROTOTYPES.items():
            if database in prototype.databases and name in wanted:
                services[name] = _prototype(stack, plan, name, database, postgres, workers)
        names = (*services, "noop")
        per_round: dict[str, list[float | None]] = {name: [] for name in names}
        database_per_round: dict[str, list[float | None]] = {name: [] for name in services}
        threads_per_round: dict[str, dict[str, list[float | None]]] = {
            name: {"event_loops": [], "worker_threads": []} for name in names
        }
        # hands/s of each variant, requests/s of the do-nothing endpoint
        rates: dict[str, list[float | None]] = {name: [] for name in names}
        noop = stack.enter_context(servers.noop(workers))
        noop.wait_ready()
        for index in range(rounds):
            for name in round_order(names, index):
                if name == "noop":
                    point = http_load.run_point(
                        noop.base_url, [None] * clients, http_load.noop_step, plan, _meters(noop)
                    )
                else:
                    service, server = services[name]
                    point = http_load.hands_point(
                        service, plan, clients, _meters(server, postgresql=database == "postgresql")
                    )
                    database_per_round[name].append(point["cpu_ms_per_unit"].get("postgresql"))
                per_round[name].append(point["cpu_ms_per_unit"]["server"])
                _note_threads(threads_per_round[name], point)
                rates[name].append(point["units_per_second"])
    medians = {name: stats.median(values) for name, values in per_round.items()}
    return {
        "database": database,
        "token_cache_seconds": token_cache_seconds,
        "workers": workers,
        "clients": clients,
        "rounds": rounds,
        "server_cpu_ms": per_round,
        "median_server_cpu_ms": medians,
        "postgresql_cpu_ms": database_per_round if database == "postgresql" else None,
        "median_postgresql_cpu_ms": (
            {name: stats.median(values) for name, values in database_per_round.items()}
            if database == "postgresql"
            else None
        ),
        "median_thread_cpu_ms": {
            name: {kind: stats.median(values) for kind, values in kinds.items()}
            for name, kinds in threads_per_round.items()
        },
        "units_per_second": rates,
        "median_units_per_second": {name: stats.median(values) for name, values in rates.items()},
        "hot_path_vs_framework": stats.ratio(medians.get("hot_path"), medians.get("framework")),
        "hot_path_vs_baseline": stats.ratio(medians.get("hot_path"), medians.get("baseline")),
        "baseline_vs_noop": stats.ratio(medians.get("baseline"), medians["noop"]),
        "hot_path_vs_noop": stats.ratio(medians.get("hot_path"), medians["noop"]),
        "framework_vs_noop": stats.ratio(medians.get("framework"), medians["noop"]),
        "prototype_vs_noop": stats.ratio(medians.get("prototype"), medians["noop"]),
        "bare_vs_noop": stats.ratio(medians.get("bare"), medians["noop"]),
        "combined_vs_noop": stats.ratio(medians.get("combined"), medians["noop"]),
        "grouped_vs_noop": stats.ratio(medians.get("grouped"), medians["noop"]),
        "unindexed_vs_noop": stats.ratio(medians.get("unindexed"), medians["noop"]),
        "optimistic_vs_noop": stats.ratio(medians.get("optimistic"), medians["noop"]),
        "exchanged_vs_noop": stats.ratio(medians.get("exchanged"), medians["noop"]),
    }


def round_order(names: Sequence[str], index: int) -> tuple[str, ...]:
    """The order in which round `index` loads `names`: reversed every other round, so that
    any two servers swap places within each pair of rounds, and turned by one place every
    two, so that each server opens rounds in its turn. Loaded in one fixed order, two builds
    that differed in nothing the load exercised measured 1.15 and 1.33 of each other (on
    2026-11-27 in the morning; 1.11 later that morning), where alone and alternated they measured
    0.99, 0.96 and 1.005: what runs just before a server, and the host's drift within a
    round, weighed on each server the same way every round (docs/performance-log.md, "A
    token looked up on the hot path", "SQLite's token look-ups on the event loop")."""
    turn = index // 2 % len(names)
    order = (*names[turn:], *names[:turn])
    return order[::-1] if index % 2 else order


def _note_threads(threads: dict[str, list[float | None]], point: dict[str, Any]) -> None:
    """A round's CPU per unit of the server's event loops and of its other threads."""
    for kind, values in threads.items():
        values.append(point["cpu_ms_per_unit"][kind])


def _token_cache_seconds(given: str) -> float:
    """What the service's settings accept (`Settings.token_cache_seconds`), refused here
    rather than by servers that then never come up."""
    seconds = float(given)
    if not 0 < seconds <= 3600:
        raise argparse.ArgumentTypeError("a token cache is more than 0 and at most 3600 s")
    return seconds


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.hot_path", description=__doc__)
    parser.add_argument(
        "--rounds", type=int, default=4, help="an even number: each pair of rounds swaps the order"
    )
    parser.add_argument("--seconds", type=float, default=FULL.duration_seconds)
    parser.add_argument("--no-sqlite", action="store_true")
    parser.add_argument("--no-postgres", action="store_true")
    parser.add_argument("--postgres-url", default=None)
    parser.add_argument(
        "--baseline",
        type=Path,
        help=(
            "a checkout of another build, with its own .venv, whose hot path is loaded too; "
            "its server migrates its own database, but the operator's token is written there "
            "by this checkout, so both must share the api_tokens table's shape"
        ),
    )
    parser.add_argument(
        "--token-cache-seconds",
        type=_token_cache_seconds,
        help="how long the service's variants remember a token: 0.001 has every request "
        "look its token up, as the requests of players who pause between hands do",
    )
    parser.add_argument(
        "--only",
        nargs="+",
        choices=SERVERS,
        help="load these servers alone, beside the do-nothing endpoint: two builds compared "
        "alone (hot_path baseline) are told apart more finely than among seven servers",
    )
    options = parser.parse_args(argv)
    if options.only and "baseline" in options.only and options.baseline is None:
        parser.error("--only baseline needs --baseline DIR")
    plan = replace(FULL, duration_seconds=options.seconds)
    chosen = (options.baseline, options.token_cache_seconds, options.only)
    results = []
    if not options.no_sqlite:
        results.append(measure("sqlite", None, plan, options.rounds, *chosen))
    if not options.no_postgres:
        postgres, reason = scratch.find_postgres(scratch.admin_url(options.postgres_url))
        if postgres is None:
            print(f"PostgreSQL not measured: {reason}", file=sys.stderr)
        else:
            results.append(measure("postgresql", postgres, plan, options.rounds, *chosen))
    json.dump(results, sys.stdout, indent=2)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
