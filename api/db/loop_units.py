"""PostgreSQL: units of work run on the event loop, each on one of a few connections kept
open, with psycopg's waits for its socket awaited on the loop.

A unit of work in a command thread cost a hop to the thread and back, and the interpreter's
lock passed between the loop and the threads at every round trip. On the loop it costs about
the same CPU (0.97-0.98 of the threads'), but a hand waits less for its turn: served, 1.06
and 1.11 times the hands a second of the command threads (the prototype 1.12-1.14;
docs/performance-log.md, "PostgreSQL's units of work on the event loop").

The unit's code stays synchronous: the `Session`, the driver and the ledger are the same code
the command line and the executor's threads run. It runs in a greenlet, kept for the next
unit once it is done (`api.db.unit_greenlets`), and where psycopg would block on its socket,
`LoopConnection.wait` hands the wait to the loop with SQLAlchemy's `await_only`
(`api.db.loop_waits`); the loop serves other requests meanwhile. Outside such a unit (the
executor's threads, the command line) a `LoopConnection` waits as psycopg does. The loop's
readiness callbacks and `select.poll` want a Unix event loop, as the server runs (uvloop,
or asyncio's on Linux).
"""

import asyncio
from collections.abc import Callable, Generator
from concurrent.futures import ThreadPoolExecutor
from contextlib import suppress
from contextvars import ContextVar
from dataclasses import dataclass
from functools import partial
from typing import Any, TypeVar

import psycopg
from psycopg.pq.abc import PGconn
from psycopg.rows import RowFactory, tuple_row
from psycopg.waiting import Ready, Wait
from sqlalchemy import Engine, event
from sqlalchemy.exc import DBAPIError
from sqlalchemy.util import await_only

from api.db.kept import KeptConnection, Losses
from api.db.loop_waits import SocketWaits, sent_while_writable
from api.db.unit_greenlets import KeptGreenlets
from ledger.database import PING_AFTER_IDLE_SECONDS

T = TypeVar("T")


class NestedUnitOfWork(RuntimeError):
    """A unit of work begun inside another on the event loop. Units there never need one:
    each takes the connection its turn holds, and a second would have to wait on the loop
    for the pool."""


@dataclass(frozen=True, slots=True)
class _Turn:
    units: "LoopUnits"
    kept: KeptConnection
    connecting: ThreadPoolExecutor
    """The threads that open a connection: psycopg's `connect` blocks (and resolves the
    host name), up to the connection timeout."""


_TURN: ContextVar[_Turn | None] = ContextVar("casino_war_loop_turn", default=None)


def kept_on_this_turn(units: "LoopUnits") -> KeptConnection | None:
    """The connection of `units`' unit of work running on the event loop here, if one is.
    Another database's unit of work on this turn takes a connection from its own pool, as
    off the loop: only tests hold two databases in one process."""
    turn = _TURN.get()
    if turn is None or turn.units is not units:
        return None
    if turn.kept.in_use:
        raise NestedUnitOfWork("a unit of work on the event loop cannot begin another")
    return turn.kept


class LoopConnection(psycopg.Connection[Any]):
    """psycopg's connection, whose waits inside a unit of work on the event loop are the
    loop's; everywhere else they are psycopg's own."""

    def __init__(self, pgconn: PGconn, row_factory: RowFactory[Any] = tuple_row) -> None:
        super().__init__(pgconn, row_factory)
        self._socket_waits = SocketWaits()

    def wait(
        self,
        gen: Generator[Wait, Ready | int, T],
        interval: float = 0.1,
        timeout: float | None = None,
    ) -> T:
        turn = _TURN.get()
        if turn is None:
            return super().wait(gen, interval, timeout)
        if timeout is not None:  # psycopg's `notifies` alone asks for one; the service never
            raise RuntimeError("a wait with a timeout is not awaited on the event loop")
        try:
            fileno = self.pgconn.socket
            try:
                state = sent_while_writable(gen, next(gen), fileno)
            except StopIteration as done:
                return done.value  # type: ignore[no-any-return]
            return await_only(self._socket_waits.waited(gen, state, fileno))
        except BaseException as stopped:
            # A failed exchange may have had libpq close the socket (a connection lost).
            self.stop_waiting_on_the_loop()
            if not isinstance(stopped, Exception):
                self._abandon(turn.connecting)
            raise

    def close(self) -> None:
        self.stop_waiting_on_the_loop()
        super().close()

    def stop_waiting_on_the_loop(self) -> None:
        """Take the loop's reader off the socket: before the socket closes and its number
        is reused, and before the connection goes back to the pool, whose other users wait
        as psycopg does."""
        self._socket_waits.stop()

    def _abandon(self, connecting: ThreadPoolExecutor) -> None:
        """Cut halfway through an exchange with the server (a cancelled task): the server
        is asked to cancel what it runs, so that a statement still running, and a COMMIT
        queued behind it in a pipeline, do not go on; then the connection, its state
        unknown, is closed, found lost and replaced (`KeptConnection`). psycopg's own wait
        cancels too, and then waits for the outcome, which the loop must not. The request
        opens a connection of its own, so it goes to the turn's connecting threads."""
        with suppress(psycopg.Error, RuntimeError):  # gone already; threads shut down
            connecting.submit(self.pgconn.get_cancel().cancel)
        self.pgconn.finish()


def open_connections_off_the_loop(engine: Engine) -> None:
    """Have `engine` open `LoopConnection`s, and open them in a thread when a unit of work
    on the event loop asks for one, so that the loop never blocks on a connection attempt
    (a database restarting can take up to the connection timeout); and take the loop's
    reader off each one that goes back to the pool."""

    @event.listens_for(engine, "checkin")
    def _checked_in(dbapi_connection: Any, _record: object) -> None:
        if isinstance(dbapi_connection, LoopConnection):
            dbapi_connection.stop_waiting_on_the_loop()

    @event.listens_for(engine, "do_connect")
    def _connect(
        _dialect: object, _record: object, cargs: list[Any], cparams: dict[str, Any]
    ) -> LoopConnection:
        connect = partial(LoopConnection.connect, *cargs, **cparams)
        turn = _TURN.get()
        if turn is None:
            return connect()
        # `run_in_executor` does not carry this context over: in the thread, psycopg waits
        # as it always does.
        opening = asyncio.get_running_loop().run_in_executor(turn.connecting, connect)
        return await_only(opening)


class LoopUnits:
    """This process's PostgreSQL units of work on its event loop: as many at once as it keeps
    connections (the pool's command half, `api.db.threads.thread_shares`), each on its own;
    past them a unit waits on the loop for its turn, which costs nothing.

    The kept connections are pinged after sitting idle and replaced when lost, as
    `KeptConnection` does. `start` runs on the loop that serves (each worker process has
    its own, and a test's app starts anew on each client)."""

    def __init__(
        self, engine: Engine, ping_after_idle_seconds: float = PING_AFTER_IDLE_SECONDS
    ) -> None:
        self._engine = engine
        self._ping_after_idle_seconds = ping_after_idle_seconds
        self._every: list[KeptConnection] = []
        self._free: list[KeptConnection] = []
        self._turns: asyncio.Semaphore | None = None
        self._connecting: ThreadPoolExecutor | None = None
        self._greenlets = KeptGreenlets()

    def start(self, connections: int) -> None:
        """Ready `connections` kept connections for this loop's units of work.

        The engine's first connection is opened here, off any turn: SQLAlchemy sets its
        dialect up on that connection under a thread's lock, and a second unit of work on
        the same loop would block the whole loop on that lock while the first awaits the
        database."""
        self.close()
        with self._engine.connect():
            pass
        losses = Losses()
        self._every = [
            KeptConnection(self._engine, self._ping_after_idle_seconds, losses)
            for _ in range(connections)
        ]
        self._free = list(self._every)
        self._turns = asyncio.Semaphore(connections)
        self._connecting = ThreadPoolExecutor(connections, "casino-war-connect")

    @property
    def started(self) -> bool:
        return self._turns is not None

    async def run(self, work: Callable[[], T]) -> T:
        """`work()` on the event loop, on a kept connection of its own."""
        if self._turns is None or self._connecting is None:
            raise RuntimeError("the units of work on the event loop have not been started")
        async with self._turns:
            kept = self._free.pop()
            turn = _TURN.set(_Turn(self, kept, self._connecting))
            try:
                return await self._greenlets.run(work)
            except Exception as failed:
                task = asyncio.current_task()
                if task is not None and task.cancelling():
                    # Cleaning up after a cancellation failed on the connection it closed:
                    # the task still ends as cancelled, as its caller expects. (Code that
                    # swallowed a cancellation without `uncancel` would have its later
                    # failures end so too; none does.)
                    raise asyncio.CancelledError from failed
                raise
            finally:
                _TURN.reset(turn)
                self._free.append(kept)

    def close(self) -> None:
        """At shutdown, once the server has finished the requests in flight."""
        for kept in self._every:
            with suppress(DBAPIError):  # one that cannot close cleanly stops no other
                kept.close()
        if self._connecting is not None:
            # A connection still being opened is not waited for: the loop must not block.
            self._connecting.shutdown(wait=False, cancel_futures=True)
        self._greenlets.clear()
        self._every, self._free, self._turns, self._connecting = [], [], None, None
