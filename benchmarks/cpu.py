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
from contextlib import suppress
from pathlib import Path

Meter = Callable[[], float | None]
"""Cumulative CPU seconds (user + system) of some processes, None if unreadable."""

_PROC = Path("/proc")
_TICKS_PER_SECOND = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _stats() -> Iterator[tuple[str, list[str]]]:
    """(command name, fields after it) of every process still there when read."""
    for entry in _PROC.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            line = (entry / "stat").read_text()
        except OSError:  # gone since listed, or not ours to read
            continue
        name, _, rest = line.partition(" (")[2].rpartition(") ")
        yield name, rest.split()


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
    return sum(_seconds(fields) for name, fields in _stats() if selected(name, fields))


def process_group(pgid: int) -> Meter:
    """A server and its workers: every process of its process group (it is started in a
    session of its own, so its group id is its pid)."""
    group = str(pgid)
    return lambda: _sum(lambda _, fields: fields[2] == group)


def event_loop_threads(pgid: int) -> Meter:
    """The main thread of every process of a server's group: where its event loop parses,
    routes and answers each request (and, on SQLite served by one process, runs the unit of
    work too)."""
    return lambda: _thread_seconds(str(pgid), main=True)


def worker_threads(pgid: int) -> Meter:
    """Every other thread of the group's processes: the command threads, which run the units
    of work on PostgreSQL, and the executor's, which run the synchronous routes."""
    return lambda: _thread_seconds(str(pgid), main=False)


def _thread_seconds(group: str, *, main: bool) -> float | None:
    """CPU seconds of the group's main threads, or of all its other threads (each thread's
    own, from /proc/<pid>/task/<tid>/stat: a thread that ended took its CPU with it, and the
    server keeps its threads for its whole life)."""
    if not _PROC.is_dir():
        return None
    total = 0.0
    for process in _PROC.iterdir():
        if not process.name.isdigit():
            continue
        try:
            if _fields(process / "stat")[2] != group:
                continue
            threads = list((process / "task").iterdir())
        except OSError:  # gone since listed, or not ours to read
            continue
        for thread in threads:
            if (thread.name == process.name) != main:
                continue
            with suppress(OSError):
                fields = _fields(thread / "stat")
                total += (int(fields[11]) + int(fields[12])) / _TICKS_PER_SECOND
    return total


def _fields(stat: Path) -> list[str]:
    """The fields after a /proc stat file's command name (which may hold spaces)."""
    return stat.read_text().rpartition(") ")[2].split()


def postgres() -> Meter:
    """Every PostgreSQL server process (the benchmark's backends do all the work while
    the load runs)."""
    return lambda: _sum(lambda name, _: name == "postgres" or name.startswith("postgres:"))


def this_process() -> float:
    """The load generator itself."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime
