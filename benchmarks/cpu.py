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


def _read_stat(stat: Path) -> tuple[str, list[str]]:
    """(command name, fields after it) of a process's or thread's stat file; the name is in
    parentheses and may hold spaces and parentheses itself."""
    name, _, rest = stat.read_text().partition(" (")[2].rpartition(") ")
    return name, rest.split()


def _stats() -> Iterator[tuple[str, list[str]]]:
    """(command name, fields after it) of every process still there when read."""
    for entry in _PROC.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = _read_stat(entry / "stat")
        except OSError:  # gone since listed, or not ours to read
            continue
        yield stat


def _own_seconds(fields: list[str]) -> float:
    """A process's or a thread's own CPU (user + system)."""
    # After the name: state, ppid, pgrp, ...; utime and stime the 12th and 13th.
    return (int(fields[11]) + int(fields[12])) / _TICKS_PER_SECOND


def _seconds(fields: list[str]) -> float:
    """The process's own CPU and that of its children it has waited for.

    Without the children's, a meter would go back when a process it counts ends: a
    PostgreSQL backend or autovacuum worker ending inside a window took its CPU with it, and
    the database once used less than nothing per deposit. Its parent (the postmaster, a
    server's supervisor) waits for it, and from then on counts its CPU as its children's.
    """
    # cutime and cstime, the 14th and 15th.
    return _own_seconds(fields) + (int(fields[13]) + int(fields[14])) / _TICKS_PER_SECOND


def _sum(selected: Callable[[str, list[str]], bool]) -> float | None:
    if not _PROC.is_dir():
        return None
    return sum(_seconds(fields) for name, fields in _stats() if selected(name, fields))


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
    of work on SQLite served by several processes, and the executor's and anyio's, which run
    the synchronous routes; those that ended included."""
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
    for entry in _PROC.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            # The main thread first: the process's time, read after it, then holds all of it.
            _, thread = _read_stat(entry / "task" / entry.name / "stat")
            if thread[2] != group:  # a thread's stat names its process's group too
                continue
            _, process = _read_stat(entry / "stat")
        except OSError:  # gone since listed, or not ours to read
            continue
        main_thread = _own_seconds(thread)
        total += main_thread if main else _own_seconds(process) - main_thread
    return total


def postgres() -> Meter:
    """Every PostgreSQL server process (the benchmark's backends do all the work while
    the load runs)."""
    return lambda: _sum(lambda name, _: name == "postgres" or name.startswith("postgres:"))


def this_process() -> float:
    """The load generator itself."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime
