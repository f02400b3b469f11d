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


def postgres() -> Meter:
    """Every PostgreSQL server process (the benchmark's backends do all the work while
    the load runs)."""
    return lambda: _sum(lambda name, _: name == "postgres" or name.startswith("postgres:"))


def this_process() -> float:
    """The load generator itself."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime
