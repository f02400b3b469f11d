"""What a hop to a worker thread and back costs the event loop's process, in one run:
`python -m benchmarks.thread_hop [--hops 20000] [--callers 8] [--rounds 3]`.

A command's unit of work runs in a worker thread on PostgreSQL (`api.db.threads`), so every
command pays for a hop there and back on top of its own work. This measures the hop alone:
`--callers` asyncio tasks on uvloop (as `api.server` serves), together sending `--hops`
calls of a function that does nothing, each way in turn, round after round: through
`anyio.to_thread.run_sync` (what the service used until 2026-11-26), through
`loop.run_in_executor` on a `ThreadPoolExecutor` (what it uses now), and called on the loop
itself. It prints the process's CPU per call (every thread, user and system) in
microseconds, each round's, and the executor's median over anyio's.
"""

import argparse
import asyncio
import contextvars
import json
import resource
import sys
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from typing import Any

import anyio.to_thread
import uvloop
from anyio import CapacityLimiter

from benchmarks import stats

Hop = Callable[[], Awaitable[None]]


def _nothing() -> None:
    """The work: none, so that what is measured is the hop."""


def _cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _hops(callers: int, threads: ThreadPoolExecutor) -> dict[str, Hop]:
    """Each way of calling `_nothing`, with as many threads as callers, as the service sizes
    its command threads to the connections they may hold."""
    limiter = CapacityLimiter(callers)

    async def anyio_thread() -> None:
        await anyio.to_thread.run_sync(_nothing, limiter=limiter)

    async def executor() -> None:
        context = contextvars.copy_context()
        await asyncio.get_running_loop().run_in_executor(threads, partial(context.run, _nothing))

    async def on_loop() -> None:
        _nothing()

    return {"anyio": anyio_thread, "executor": executor, "loop": on_loop}


async def _cpu_per_call(hop: Hop, calls: int, callers: int) -> float:
    """Microseconds of this process's CPU per call, `callers` tasks sharing `calls`."""

    async def caller() -> None:
        for _ in range(calls // callers):
            await hop()

    started = _cpu_seconds()
    await asyncio.gather(*(caller() for _ in range(callers)))
    return round((_cpu_seconds() - started) / (calls // callers * callers) * 1e6, 2)


async def _measure(hops: int, callers: int, rounds: int) -> dict[str, Any]:
    with ThreadPoolExecutor(max_workers=callers) as threads:
        ways = _hops(callers, threads)
        per_round: dict[str, list[float | None]] = {name: [] for name in ways}
        for hop in ways.values():  # warm-up: the threads started, the code paths run
            await _cpu_per_call(hop, min(hops, 1_000), callers)
        for _ in range(rounds):
            for name, hop in ways.items():
                per_round[name].append(await _cpu_per_call(hop, hops, callers))
    medians = {name: stats.median(values, digits=2) for name, values in per_round.items()}
    return {
        "hops": hops,
        "callers": callers,
        "rounds": rounds,
        "cpu_us_per_call": per_round,
        "median_cpu_us_per_call": medians,
        "executor_vs_anyio": stats.ratio(medians["executor"], medians["anyio"]),
    }


def measure(hops: int = 20_000, callers: int = 8, rounds: int = 3) -> dict[str, Any]:
    """Each way's CPU per call, every round, and their medians; `hops` calls a way a round,
    shared by `callers` tasks (at least one call each)."""
    if hops < callers:
        raise ValueError(f"{hops} hops cannot be shared by {callers} callers")
    return uvloop.run(_measure(hops, callers, rounds))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.thread_hop", description=__doc__)
    parser.add_argument("--hops", type=int, default=20_000)
    parser.add_argument("--callers", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=3)
    options = parser.parse_args(argv)
    try:
        result = measure(options.hops, options.callers, options.rounds)
    except ValueError as refused:
        parser.error(str(refused))
    json.dump(result, sys.stdout, indent=2)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
