"""The limits our figures are divided by, measured in the same run on the same machine.

- PostgreSQL: pgbench's built-in TPC-B-like transaction on a scratch database.
- SQLite: the same shape of transaction through raw `sqlite3` (BEGIN IMMEDIATE; update three
  balances; insert a history row; COMMIT) with the PRAGMAs of `ledger.database`, one
  connection per thread.
- HTTP: the do-nothing endpoint (`benchmarks.noop_app`), see `http_load.noop_curve`.
"""

import glob
import os
import random
import re
import shutil
import sqlite3
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from sqlalchemy import make_url

from benchmarks.plan import Plan
from benchmarks.stats import latency_summary, rate
from ledger.database import SQLITE_BUSY_TIMEOUT_SECONDS, normalize_url

# pgbench ---------------------------------------------------------------------------------


def find_pgbench() -> str | None:
    """pgbench from the PostgreSQL installation (newest first), else from PATH."""
    candidates = sorted(
        glob.glob("/usr/lib/postgresql/*/bin/pgbench"),
        key=lambda path: int(re.sub(r"\D", "", path.split("/")[4]) or 0),
        reverse=True,
    )
    for candidate in candidates:
        if os.access(candidate, os.X_OK):
            return candidate
    return shutil.which("pgbench")


def _connection_arguments(url: str) -> tuple[list[str], dict[str, str]]:
    parsed = make_url(normalize_url(url))
    arguments = ["-h", parsed.host or "127.0.0.1", "-p", str(parsed.port or 5432)]
    if parsed.username:
        arguments += ["-U", parsed.username]
    env = {**os.environ}
    if parsed.password:
        env["PGPASSWORD"] = str(parsed.password)
    return [*arguments, parsed.database or "postgres"], env


def _run(command: list[str], env: dict[str, str], cwd: str) -> str:
    done = subprocess.run(command, env=env, cwd=cwd, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed: {done.stderr.strip()[-1000:]}")
    return done.stdout


def _float(pattern: str, text: str) -> float | None:
    match = re.search(pattern, text)
    return float(match.group(1)) if match else None


def _tps(output: str) -> float | None:
    tps = _float(r"tps = ([\d.]+) \(without initial connection time\)", output)
    tps = tps if tps is not None else _float(r"tps = ([\d.]+)", output)
    return None if tps is None else round(tps, 1)


def pgbench_curve(
    pgbench: str, url: str, plan: Plan, initialised: Callable[[], None] = lambda: None
) -> dict[str, dict[str, Any]]:
    """TPC-B-like tps at each client count, with latencies from pgbench's transaction log.

    `initialised` is called between `pgbench -i` and the first measured run: the caller
    finishes there whatever it let run during the initialisation (stopping a server).
    """
    arguments, env = _connection_arguments(url)
    seconds = max(1, round(plan.duration_seconds))  # pgbench -T takes whole seconds
    points: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory(prefix="casino-war-pgbench-") as directory:
        _run([pgbench, "-i", "-q", "-s", str(plan.pgbench_scale), *arguments], env, directory)
        initialised()
        for count in plan.clients:
            for old in Path(directory).glob("log*"):
                old.unlink()
            output = _run(
                [
                    pgbench,
                    *("-c", str(count), "-j", str(count), "-T", str(seconds)),
                    "-n",
                    *("-l", "--log-prefix", "log"),
                    *arguments,
                ],
                env,
                directory,
            )
            latencies = [
                int(line.split()[2]) / 1_000_000
                for log in Path(directory).glob("log*")
                for line in log.read_text().splitlines()
                if line.strip()
            ]
            points[str(count)] = {
                "clients": count,
                "seconds": seconds,
                "tps": _tps(output),
                "transactions": len(latencies),
                "latency_ms": latency_summary(latencies),
            }
    return points


# SQLite ----------------------------------------------------------------------------------

ACCOUNTS_PER_SCALE = 100_000
TELLERS_PER_SCALE = 10
SQLITE_SCALE = 1


def _connect(path: str) -> sqlite3.Connection:
    """A connection set up as `ledger.database` sets up the service's (WAL, NORMAL sync)."""
    connection = sqlite3.connect(
        path, timeout=SQLITE_BUSY_TIMEOUT_SECONDS, isolation_level=None, check_same_thread=False
    )
    connection.execute("PRAGMA journal_mode=WAL")
    connection.execute("PRAGMA synchronous=NORMAL")
    connection.execute("PRAGMA foreign_keys=ON")
    connection.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_SECONDS * 1000}")
    return connection


def _initialise(path: str, scale: int) -> None:
    connection = _connect(path)
    try:
        connection.executescript(
            """
            CREATE TABLE branches (bid INTEGER PRIMARY KEY, bbalance INTEGER NOT NULL);
            CREATE TABLE tellers (tid INTEGER PRIMARY KEY, bid INTEGER NOT NULL,
                                  tbalance INTEGER NOT NULL);
            CREATE TABLE accounts (aid INTEGER PRIMARY KEY, bid INTEGER NOT NULL,
                                   abalance INTEGER NOT NULL, filler TEXT);
            CREATE TABLE history (id INTEGER PRIMARY KEY, tid INTEGER, bid INTEGER,
                                  aid INTEGER, delta INTEGER, mtime TEXT);
            """
        )
        connection.execute("BEGIN IMMEDIATE")
        connection.executemany(
            "INSERT INTO branches VALUES (?, 0)", [(b,) for b in range(1, scale + 1)]
        )
        connection.executemany(
            "INSERT INTO tellers VALUES (?, ?, 0)",
            [
                (teller, 1 + (teller - 1) // TELLERS_PER_SCALE)
                for teller in range(1, TELLERS_PER_SCALE * scale + 1)
            ],
        )
        connection.executemany(
            "INSERT INTO accounts VALUES (?, ?, 0, '')",
            [
                (a, 1 + (a - 1) // ACCOUNTS_PER_SCALE)
                for a in range(1, ACCOUNTS_PER_SCALE * scale + 1)
            ],
        )
        connection.execute("COMMIT")
    finally:
        connection.close()


def _tpcb(connection: sqlite3.Connection, generator: random.Random, scale: int) -> None:
    aid = generator.randint(1, ACCOUNTS_PER_SCALE * scale)
    tid = generator.randint(1, TELLERS_PER_SCALE * scale)
    bid = generator.randint(1, scale)
    delta = generator.randint(-5000, 5000)
    connection.execute("BEGIN IMMEDIATE")
    connection.execute("UPDATE accounts SET abalance = abalance + ? WHERE aid = ?", (delta, aid))
    connection.execute("SELECT abalance FROM accounts WHERE aid = ?", (aid,)).fetchone()
    connection.execute("UPDATE tellers SET tbalance = tbalance + ? WHERE tid = ?", (delta, tid))
    connection.execute("UPDATE branches SET bbalance = bbalance + ? WHERE bid = ?", (delta, bid))
    connection.execute(
        "INSERT INTO history (tid, bid, aid, delta, mtime) VALUES (?, ?, ?, ?, datetime('now'))",
        (tid, bid, aid, delta),
    )
    connection.execute("COMMIT")


def sqlite_curve(plan: Plan) -> dict[str, dict[str, Any]]:
    """Raw SQLite TPC-B-shaped transactions per second at each client count (threads)."""
    directory = tempfile.mkdtemp(prefix="casino-war-sqlite-limit-")
    path = str(Path(directory) / "limit.db")
    scale = SQLITE_SCALE  # one writer at a time whatever the scale: rows never contend
    try:
        _initialise(path, scale)
        return {str(count): _sqlite_point(path, count, scale, plan) for count in plan.clients}
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def _sqlite_point(path: str, count: int, scale: int, plan: Plan) -> dict[str, Any]:
    measuring = threading.Event()
    stopping = threading.Event()
    lock = threading.Lock()
    latencies: list[float] = []

    def client(seed: int) -> None:
        connection = _connect(path)
        generator = random.Random(seed)
        mine: list[float] = []
        try:
            while not stopping.is_set():
                started = time.perf_counter()
                _tpcb(connection, generator, scale)
                if measuring.is_set():
                    mine.append(time.perf_counter() - started)
        finally:
            connection.close()
            with lock:
                latencies.extend(mine)

    threads = [threading.Thread(target=client, args=(seed,)) for seed in range(count)]
    for thread in threads:
        thread.start()
    time.sleep(plan.warmup_seconds)
    measuring.set()
    started = time.perf_counter()
    time.sleep(plan.duration_seconds)
    measuring.clear()
    elapsed = time.perf_counter() - started
    stopping.set()
    for thread in threads:
        thread.join()
    return {
        "clients": count,
        "seconds": round(elapsed, 3),
        "tps": rate(len(latencies), elapsed),
        "transactions": len(latencies),
        "latency_ms": latency_summary(latencies),
    }
