"""Instructions per audited hand, counted by valgrind: `python -m benchmarks.instructions`.

On a shared host the CPU time of the same audit of the same chunk of hands moves from one
minute to the next, as other tenants come and go, by more than most changes are worth. The
number of instructions the audit executes does not move with the host
(`valgrind --tool=callgrind` counts them, identically run after run on the same database),
so comparing it before and after a change shows what the change did. A diagnostic for
comparing builds, not a throughput figure: instructions are not seconds (cache misses and
the database's I/O cost time without costing instructions).

Method: a SQLite database is filled by the service functions (as the audit benchmark does),
then audited under callgrind twice, each time in a process of its own
(`benchmarks.audit_once`): once over the first `--hands` hands and once over `GROWTH` times
as many. Everything fixed (the interpreter's start, imports, the first batch's compiled
queries) is in both counts, so their difference divided by the difference in hands is the
cost of one more hand, batches included.
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from sqlalchemy import make_url

import migrations
from api.db.database import Database
from benchmarks.audit_bench import HandFactory
from benchmarks.audit_once import BATCH
from benchmarks.plan import FULL
from benchmarks.scratch import sqlite_scratch

ROOT = Path(__file__).resolve().parent.parent
GROWTH = 3  # the larger count audits this many times the smaller count's hands
TIMEOUT_SECONDS = 900  # ends a hung count; far above what the plan's counts take
_COLLECTED = re.compile(r"Collected : (\d+)")


def callgrind_command() -> list[str]:
    """valgrind's callgrind, its output file discarded (its count is read from stderr);
    refused, with the package to install, where valgrind is missing."""
    valgrind = shutil.which("valgrind")
    if valgrind is None:
        raise RuntimeError("valgrind is not installed (Debian package valgrind)")
    return [valgrind, "--tool=callgrind", "--callgrind-out-file=/dev/null"]


def count_instructions(command: Sequence[str], stdin: str = "") -> int:
    """The instructions `command` executes from start to exit, as callgrind counts them.

    `stdin` is the command's input. An error message quotes the command and the end of its
    (and valgrind's) stderr, so neither may hold a secret: pass those on stdin.
    """
    callgrind = callgrind_command()
    shown = " ".join(command)
    try:
        finished = subprocess.run(
            [*callgrind, *command],
            cwd=ROOT,
            # Fixed string hashing: set and dict orders, and so the count, repeat run after run.
            env={**os.environ, "PYTHONHASHSEED": "0"},
            input=stdin,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            errors="replace",
            timeout=TIMEOUT_SECONDS,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise RuntimeError(f"{shown} ran over {TIMEOUT_SECONDS} s under valgrind") from None
    if finished.returncode != 0:
        raise RuntimeError(f"{shown} failed under valgrind: {finished.stderr[-2000:]}")
    found = _COLLECTED.search(finished.stderr)
    if found is None:
        raise RuntimeError(f"callgrind reported no count for {shown}")
    return int(found.group(1))


def per_unit(smaller: tuple[int, int], larger: tuple[int, int]) -> float:
    """The marginal cost of one unit from two (units, instructions) runs that share their
    fixed costs."""
    (units_a, count_a), (units_b, count_b) = smaller, larger
    if units_b <= units_a:
        raise ValueError("the larger run must cover more units")
    return (count_b - count_a) / (units_b - units_a)


def measure(hands: int, database: Path | None = None) -> dict[str, Any]:
    """Instructions per audited hand, on a scratch database or on the SQLite file `database`
    (filled first if it does not exist).

    Two builds counted on the same file count the same hands; a fresh database deals other
    cards, and how many hands went to war moves the figure slightly.
    """
    if database is None:
        with sqlite_scratch("instructions") as url:
            _fill(url, GROWTH * hands)
            return count_audit(url, hands)
    return count_audit(prepared(database, GROWTH * hands), hands)


def prepared(database: Path, hands: int) -> str:
    """The URL of the SQLite file `database`, filled with `hands` hands if it does not exist.

    Resolved, so that the audited process (started in the project's directory) opens the
    same file. Filled under another name and renamed once complete, so that an interrupted
    fill leaves no half-filled file behind to be counted next time.
    """
    database = database.resolve()
    if not database.exists():
        filling = database.with_name(f"{database.name}.filling")
        filling.unlink(missing_ok=True)
        _fill(f"sqlite:///{filling}", hands)
        filling.rename(database)
    return f"sqlite:///{database}"


def _fill(url: str, hands: int) -> None:
    migrations.upgrade(url)
    database = Database.connect(url)
    try:
        HandFactory(database, FULL).grow_to(hands)
    finally:
        database.dispose()


def count_audit(url: str, hands: int) -> dict[str, Any]:
    """The audits of the first `hands` hands and of `GROWTH` times as many, each counted in
    a process of its own, on a database that holds at least that many; both counts and the
    cost of one more hand.

    On PostgreSQL only the client's instructions are counted (the server is a process of
    its own): the figures this project quotes are SQLite's.
    """
    if hands < 1:
        raise ValueError("hands must be positive")
    sizes = (hands, GROWTH * hands)
    counts = [
        count_instructions(
            [sys.executable, "-m", "benchmarks.audit_once", str(size)], stdin=f"{url}\n"
        )
        for size in sizes
    ]
    return {
        "measured": "api.domain.audit.batch.audit_hands, one process",
        "database": make_url(url).get_backend_name(),
        "batch": BATCH,
        "instructions": {str(size): count for size, count in zip(sizes, counts, strict=True)},
        "instructions_per_hand": round(per_unit((sizes[0], counts[0]), (sizes[1], counts[1]))),
    }


def main() -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.instructions",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--hands", type=int, default=1_000, help="the smaller audit's hands")
    parser.add_argument(
        "--database",
        type=Path,
        metavar="FILE",
        help="SQLite file to audit (filled first if missing), to count two builds on one",
    )
    args = parser.parse_args()
    if args.hands < BATCH or args.hands % BATCH:
        parser.error(f"--hands must be a positive multiple of {BATCH}")
    print(json.dumps(measure(args.hands, args.database), indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
