"""The server's worker threads, sized to the database pool so that no thread ever waits for
a connection.

Two kinds of thread take the pool's connections, one at a time each: anyio's worker threads
(every command's unit of work, as `api.http.idempotency` runs it, except on SQLite served by
one process, where it runs on the event loop; the token look-ups) and the event loop's
default executor (Litestar's synchronous routes: the reads, reports, statements, history).
Left to their defaults (40 anyio threads; min(32, CPUs + 4) in the executor) together they
outnumber the pool, and a thread past it blocks on the pool, up to the database timeout; a
few slow reports could then take every connection from the commands. Split half and half,
at most as many threads as connections run at once, so past them a request waits on the
event loop for a thread, which costs nothing, and slow reads can take at most their half of
the pool.
"""

import asyncio
from concurrent.futures import ThreadPoolExecutor

from anyio.to_thread import current_default_thread_limiter


def thread_shares(pool_size: int) -> tuple[int, int]:
    """The pool's connections split: (anyio's worker threads, the executor's threads); a
    pool of at least two (`Settings.database_pool_size`) leaves each at least one."""
    routes = pool_size // 2
    return pool_size - routes, routes


def share_connections_between_threads(pool_size: int) -> None:
    """Size this event loop's worker threads to the pool; run at the server's start-up, on
    the loop that serves (each worker process has its own)."""
    anyio_threads, route_threads = thread_shares(pool_size)
    current_default_thread_limiter().total_tokens = anyio_threads
    executor = ThreadPoolExecutor(max_workers=route_threads, thread_name_prefix="casino-war")
    asyncio.get_running_loop().set_default_executor(executor)
