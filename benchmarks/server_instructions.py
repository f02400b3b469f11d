"""Instructions per hand of a real server against a do-nothing request, counted by valgrind:
`python -m benchmarks.server_instructions [--small N] [--large N] [--servers NAME ...]
[--postgres]`.

The server's CPU per hand moves by a fifth to a third from one minute to the next on this
shared host (docs/performance-log.md); the instructions it executes do not. Each server is
run under `valgrind --tool=callgrind` twice and loaded by the benchmark's own closed loop (8
clients, `benchmarks.http_load`) until it has settled `small` units, then, in the second
run, `large` units: the difference of the two counts over the difference in units is what
one more unit costs the server, its start-up, migrations and the players' set-up cancelling
out (`benchmarks.instructions.per_unit`). The servers: `casino-war serve` with the hot path,
without it (`CASINO_WAR_HOT_PATH=false`), the prototypes of `benchmarks.lean_hand` and
`benchmarks.bare_hand` (each on a database the service set up for it, outside the count),
the bare one's shapes that take the product decisions (`grouped`: hands committed together;
`unindexed`: that, and no indexes that only readers need, as `benchmarks.hot_path` serves
them), and the do-nothing endpoint (`--servers` picks some); SQLite, one process. With
`--postgres`, on a scratch database of the PostgreSQL server the environment names
(`benchmarks.scratch.admin_url`), one process too, with the bare prototype's PostgreSQL
shapes (`combined`, `optimistic`, `exchanged`): what is counted is the server's side of
each statement, PostgreSQL's own work left out (it runs in its server), and a count moves
by a few percent with the timing of its waits (whether an answer is there already).

Under valgrind a server runs about fifty times slower, so it runs with
`CASINO_WAR_TOKEN_CACHE_SECONDS=3600`: with the default second, the token a client sends
would have expired from the worker's memory by nearly every request, and every request
would pay for a look-up that a server at full speed makes once a second per token.
Instructions are not seconds (cache misses and the kernel's work are not counted), so this
compares builds and paths; throughput still comes from `python -m benchmarks`.
"""

import argparse
import asyncio
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

import httpx

from benchmarks import http_load, lean_hand, scratch, servers, sqlite_floor
from benchmarks.instructions import callgrind_command, per_unit
from benchmarks.plan import QUICK

CLIENTS = 8
Database = Literal["sqlite", "postgresql"]
READY_SECONDS = 600.0  # a server starting under valgrind takes a minute or two here
_COLLECTED = re.compile(rb"Collected : (\d+)")


@dataclass(frozen=True, slots=True)
class _Counted:
    """A server `count` runs: which (`_MODULES`), with what settings and arguments, the
    SQLite indexes dropped from its database once the service has set it up, and the
    databases it serves."""

    kind: str
    env: Mapping[str, str] = field(default_factory=dict)
    arguments: tuple[str, ...] = ()
    dropped_indexes: tuple[str, ...] = ()
    databases: tuple[Database, ...] = ("sqlite", "postgresql")


_VARIANTS = {
    "hot_path": _Counted("hands", {"CASINO_WAR_HOT_PATH": "true"}),
    "framework": _Counted("hands", {"CASINO_WAR_HOT_PATH": "false"}),
    "prototype": _Counted("prototype", databases=("sqlite",)),
    "bare": _Counted("bare"),
    "grouped": _Counted("bare", arguments=("--grouped",), databases=("sqlite",)),
    "unindexed": _Counted(
        "bare",
        arguments=("--grouped",),
        dropped_indexes=sqlite_floor.READERS_ONLY_INDEXES,
        databases=("sqlite",),
    ),
    "combined": _Counted("bare", arguments=("--combined",), databases=("postgresql",)),
    "optimistic": _Counted("bare", arguments=("--optimistic",), databases=("postgresql",)),
    "exchanged": _Counted("bare", arguments=("--exchanged",), databases=("postgresql",)),
    "noop": _Counted("noop"),
}


async def _drive(
    base_url: str, tokens: Sequence[str | None], step: http_load.Step, units: int
) -> int:
    """Run the clients until `units` units have settled; the units settled."""
    window = http_load.Window(measuring=True)

    async def client_loop(client: httpx.AsyncClient) -> None:
        async with client:
            while window.units < units:
                await step(client, window)

    await asyncio.gather(*(client_loop(http_load.client(base_url, t)) for t in tokens))
    if window.errors:
        raise RuntimeError(f"the load failed: {window.first_error}")
    return window.units


def _wait_ready(base_url: str, process: "subprocess.Popen[bytes]") -> None:
    deadline = time.monotonic() + READY_SECONDS
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError("the server exited under valgrind before it was ready")
        try:
            if httpx.get(base_url + "/ready", timeout=5).status_code == 200:
                return
        except httpx.HTTPError:
            time.sleep(0.5)
    raise RuntimeError(f"the server was not ready in {READY_SECONDS:.0f} s under valgrind")


_MODULES = {
    "noop": ("benchmarks.noop_app",),
    "prototype": ("benchmarks.lean_hand",),
    "bare": ("benchmarks.bare_hand",),
    "hands": ("api.cli", "serve"),
}
_PLAN = replace(QUICK, clients=(CLIENTS,))
_PREPARED = ("prototype", "bare")  # served on a database the service set up for them


def count(
    kind: str,
    env: Mapping[str, str],
    units: int,
    *,
    arguments: Sequence[str] = (),
    dropped_indexes: Sequence[str] = (),
    database: Database = "sqlite",
) -> tuple[int, int]:
    """(units settled, instructions) of one server run under callgrind, started with
    `arguments`, on a fresh database of kind `database`; for a prototype, `dropped_indexes`
    go from the SQLite database set up for it first. Refused, with the reason, where
    valgrind is not installed."""
    if dropped_indexes and (kind not in _PREPARED or database != "sqlite"):
        raise ValueError("indexes are dropped only from a SQLite database a prototype is given")
    callgrind = callgrind_command()
    port = servers.free_port()
    base_url = f"http://127.0.0.1:{port}"
    with (
        tempfile.TemporaryDirectory(prefix="casino-war-server-instructions-") as directory,
        _fresh(database, Path(directory)) as url,
    ):
        service = lean_hand.prepared(url, _PLAN) if kind in _PREPARED else None
        if dropped_indexes:
            sqlite_floor.drop_indexes(Path(directory) / "bench.db", dropped_indexes)
        env = {
            **os.environ,
            **env,
            "PYTHONHASHSEED": "0",
            "CASINO_WAR_DATABASE_URL": url,
            "CASINO_WAR_TOKEN_CACHE_SECONDS": "3600",
        }
        command = [sys.executable, "-m", *_MODULES[kind], "--port", str(port), *arguments]
        log = Path(directory) / "valgrind.log"
        with log.open("wb") as output:
            process = subprocess.Popen(
                [*callgrind, *command],
                env=env,
                cwd=servers.ROOT,
                stdin=subprocess.DEVNULL,
                stdout=output,
                stderr=subprocess.STDOUT,
            )
            try:
                _wait_ready(base_url, process)
                settled = _load(kind, base_url, url, units, service)
            finally:
                _stop(process)
        found = _COLLECTED.search(log.read_bytes())
        if found is None:
            raise RuntimeError(f"callgrind reported no count for {kind}")
        return settled, int(found.group(1))


@contextmanager
def _fresh(database: Database, directory: Path) -> Iterator[str]:
    """A fresh database's URL: SQLite's a file in `directory`, PostgreSQL's a scratch
    database, dropped afterwards."""
    if database == "sqlite":
        yield f"sqlite:///{directory / 'bench.db'}"
        return
    with scratch.PostgresServer(scratch.admin_url(None)).scratch("server_instructions") as url:
        yield url


def _stop(process: "subprocess.Popen[bytes]") -> None:
    """SIGTERM, so that callgrind writes its count; killed if it has not exited in time, so
    that a failed count leaves no server behind."""
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout=READY_SECONDS)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
        raise


def _load(
    kind: str, base_url: str, database_url: str, units: int, service: http_load.Service | None
) -> int:
    if kind == "noop":
        return asyncio.run(_drive(base_url, [None] * CLIENTS, http_load.noop_step, units))
    service = service or http_load.set_up(base_url, database_url, _PLAN)
    tokens = [player.token for player in service.players]
    step = http_load.hand_step(service.table_id, _PLAN.bet)
    return asyncio.run(_drive(base_url, tokens, step, units))


def measure(
    small: int, large: int, names: Sequence[str] = ("hot_path",), *, database: Database = "sqlite"
) -> dict[str, Any]:
    """Instructions per unit of each server named (the hot path's alone by default), on
    `database`, and each one's ratio to the do-nothing request (always counted: every ratio
    is to it)."""
    unserved = unserved_on(database, names)
    if unserved:
        raise ValueError(f"not served on {database}: {', '.join(unserved)}")
    results: dict[str, Any] = {}
    for name in dict.fromkeys([*names, "noop"]):
        server = _VARIANTS[name]
        runs = [
            count(
                server.kind,
                server.env,
                units,
                arguments=server.arguments,
                dropped_indexes=server.dropped_indexes,
                database=database,
            )
            for units in (small, large)
        ]
        results[name] = {
            "runs": [{"units": u, "instructions": i} for u, i in runs],
            "instructions_per_unit": round(per_unit(runs[0], runs[1])),
        }
    per = {name: results[name]["instructions_per_unit"] for name in results}
    ratios = {
        f"{name}_vs_noop": round(per[name] / per["noop"], 3) for name in per if name != "noop"
    }
    if "hot_path" in per and "framework" in per:
        ratios["hot_path_vs_framework"] = round(per["hot_path"] / per["framework"], 3)
    return {"database": database, "clients": CLIENTS, "servers": results, **ratios}


def unserved_on(database: Database, names: Sequence[str]) -> list[str]:
    """The servers named that do not serve `database`."""
    return [name for name in names if database not in _VARIANTS[name].databases]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.server_instructions", description=__doc__
    )
    parser.add_argument("--small", type=int, default=200, help="units of the smaller run")
    parser.add_argument("--large", type=int, default=600, help="units of the larger run")
    parser.add_argument(
        "--servers",
        nargs="+",
        choices=list(_VARIANTS),
        help="the servers to count (the do-nothing request always is); by default every one "
        "the database serves",
    )
    parser.add_argument(
        "--postgres", action="store_true", help="on a scratch PostgreSQL database (see above)"
    )
    options = parser.parse_args(argv)
    database: Database = "postgresql" if options.postgres else "sqlite"
    names = options.servers or [
        name for name, server in _VARIANTS.items() if database in server.databases
    ]
    if unserved := unserved_on(database, names):
        parser.error(f"not served on {database}: {', '.join(unserved)}")
    measured = measure(options.small, options.large, names, database=database)
    json.dump(measured, sys.stdout, indent=2)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
