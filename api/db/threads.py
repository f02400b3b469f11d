"""The server's worker threads, sized to the database pool so that no thread ever waits for
a connection.

Two kinds of work take the pool's connections, one at a time each: the commands (every
command's units of work, as `api.http.idempotency` runs them, and the token look-ups) and
the event loop's default executor (Litestar's synchronous routes: the reads, reports,
statements, history). Left to the libraries' defaults (40 anyio worker threads,
min(32, CPUs + 4) in the executor) together they would outnumber the pool, and a thread past
it blocks on the pool, up to the database timeout; a few slow reports could then take every
connection from the commands. Split half and half, at most as many run at once as there are
connections, so past them a request waits on the event loop for its turn, which costs
nothing, and slow reads can take at most their half of the pool.

On PostgreSQL the commands' half runs on the event loop, each unit on a kept connection
(`api.db.loop_units`). On SQLite it runs on the loop itself when one process serves, one
unit at a time, and in command threads when several do (`Database.run_units`). The command
threads are a plain `ThreadPoolExecutor`, not anyio's worker threads: a hop through
`anyio.to_thread.run_sync` (its cancel scope, its capacity limiter) cost 56 µs of CPU,
through `loop.run_in_executor` 25 µs (`benchmarks.thread_hop`; docs/performance-log.md,
"The hop to a command thread"). So code run there cannot call back into the loop with
`anyio.from_thread`; none does.
"""

import asyncio
import contextvars
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from typing import TypeVar

from anyio.lowlevel import RunVar

T = TypeVar("T")

_COMMAND_THREADS = RunVar[ThreadPoolExecutor]("casino_war_command_threads")


def thread_shares(pool_size: int) -> tuple[int, int]:
    """The pool's connections split: (the commands' units of work at once, the executor's
    threads); a pool of at least two (`Settings.database_pool_size`) leaves each at least
    one."""
    routes = pool_size // 2
    return pool_size - routes, routes


def share_connections_between_threads(pool_size: int, *, command_threads: bool = True) -> None:
    """Size this event loop's worker threads to the pool; run at the server's start-up, on
    the loop that serves (each worker process has its own). Without `command_threads`
    (where the commands run on the loop: `Database.units_run_in_threads`) only the
    executor's are made."""
    commands, route_threads = thread_shares(pool_size)
    if command_threads:
        _COMMAND_THREADS.set(
            ThreadPoolExecutor(max_workers=commands, thread_name_prefix="casino-war-command")
        )
    routes = ThreadPoolExecutor(max_workers=route_threads, thread_name_prefix="casino-war")
    asyncio.get_running_loop().set_default_executor(routes)


async def stop_command_threads() -> None:
    """At shutdown: this event loop's command threads take no more work and finish what they
    run, before the database closes its connections (`on_shutdown`'s order). By
    then uvicorn has waited for every request in flight (the service sets no graceful-shutdown
    timeout), so little or nothing is left; the wait runs in a thread, off the loop."""
    try:
        threads = _COMMAND_THREADS.get()
    except LookupError:
        return
    await asyncio.to_thread(threads.shutdown, wait=True)


async def in_command_thread(work: Callable[[], T]) -> T:
    """`work()` in one of this event loop's command threads, with the caller's context
    variables, as Litestar runs its synchronous routes. On a loop that did not start as the
    server starts (a test's own), in the loop's default executor."""
    try:
        threads: ThreadPoolExecutor | None = _COMMAND_THREADS.get()
    except LookupError:
        threads = None
    context = contextvars.copy_context()
    return await asyncio.get_running_loop().run_in_executor(threads, partial(context.run, work))
