"""CPU time of the processes under load, read from /proc (Linux; None elsewhere).

Requests per second on a two-CPU machine shared with the load generator say how fast the
whole set-up went; CPU per request says what one request costs each process, whoever else
was busy. Divided over a window's requests, it shows where a hand's time goes (the server,
PostgreSQL, the load generator) and how many do-nothing requests one hand costs the server,
a figure that moves far less with the host's load than throughput does.
"""

import os
import resource
from collections.abc import Callable, Iterator
from pathlib import Path

Meter = Callable[[], float | None]
"""Cumulative CPU seconds (user + system) of some processes, None if unreadable."""

_PROC = Path("/proc")
_TICKS_PER_SECOND = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _stats() -> Iterator[tuple[Path, str, list[str]]]:
    """(/proc directory, command name, fields after it) of every process still there when
    read."""
    for entry in _PROC.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            line = (entry / "stat").read_text()
        except OSError:  # gone since listed, or not ours to read
            continue
        name, _, rest = line.partition(" (")[2].rpartition(") ")
        yield entry, name, rest.split()


def _seconds(fields: list[str]) -> float:
    """The process's own CPU and that of its children it has waited for.

    Without the children's, a meter would go back when a process it counts ends: a
    PostgreSQL backend or autovacuum worker ending inside a window took its CPU with it, and
    the database once used less than nothing per deposit. Its parent (the postmaster, a
    server's supervisor) waits for it, and from then on counts its CPU as its children's.
    """
    # After the name: state, ppid, pgrp, ...; utime, stime, cutime and cstime the 12th-15th.
    return sum(int(field) for field in fields[11:15]) / _TICKS_PER_SECOND


def _sum(selected: Callable[[str, list[str]], bool]) -> float | None:
    if not _PROC.is_dir():
        return None
    return sum(_seconds(fields) for _, name, fields in _stats() if selected(name, fields))


def process_group(pgid: int) -> Meter:
    """A server and its workers: every process of its process group (it is started in a
    session of its own, so its group id is its pid)."""
    group = str(pgid)
    return lambda: _sum(lambda _, fields: fields[2] == group)


def event_loop_threads(pgid: int) -> Meter:
    """The main thread of every process of a server's group: where its event loop parses,
    routes and answers each request (and, on SQLite served by one process, runs the unit of
    work too). With several workers, their supervisor's main thread is counted too; it
    serves no request."""
    return lambda: _split(str(pgid), main=True)


def worker_threads(pgid: int) -> Meter:
    """Every other thread of the group's processes: the command threads, which run the units
    of work on PostgreSQL, and the executor's and anyio's, which run the synchronous routes;
    those that ended included."""
    return lambda: _split(str(pgid), main=False)


def _split(group: str, *, main: bool) -> float | None:
    """CPU seconds of the group's main threads, or of the rest of its processes' own CPU.

    The rest is the process's own time less its main thread's: a process's own time keeps
    the time of threads that ended (anyio ends its idle worker threads after ten seconds),
    where a thread's entry goes with it. Neither counts the children a process waited for,
    which `process_group` does."""
    if not _PROC.is_dir():
        return None
    total = 0.0
    for process, _, fields in _stats():
        if fields[2] != group:
            continue
        try:
            line = (process / "task" / process.name / "stat").read_text()
        except OSError:  # gone since listed
            continue
        main_thread = _own_seconds(line.rpartition(") ")[2].split())
        total += main_thread if main else _own_seconds(fields) - main_thread
    return total


def _own_seconds(fields: list[str]) -> float:
    """A process's or a thread's own CPU (user + system), from its stat fields."""
    # After the name: state, ppid, pgrp, ...; utime and stime the 12th and 13th.
    return (int(fields[11]) + int(fields[12])) / _TICKS_PER_SECOND


def postgres() -> Meter:
    """Every PostgreSQL server process (the benchmark's backends do all the work while
    the load runs)."""
    return lambda: _sum(lambda name, _: name == "postgres" or name.startswith("postgres:"))


def this_process() -> float:
    """The load generator itself."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime
