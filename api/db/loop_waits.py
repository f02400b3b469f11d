"""psycopg's waits for its socket, on the event loop (`api.db.loop_units`).

psycopg drives every exchange with the server as a generator that says when it must wait for
its socket; a unit of work on the loop hands those waits to the loop. Two things make that
cheap. An exchange is driven in place for as long as it needs no wait: six in ten of a
hand's exchanges never wait (entering a pipeline, queueing a statement in one, a commit with
nothing left to send), and handing each to the loop cost two switches of greenlet and a
coroutine. And a connection keeps the loop's reader on its socket from one wait for an
answer to the next, where registering it for each wait and removing it after cost the
kernel two calls and the loop a handle a wait, four waits a hand: served, the two measured
0.88 of the server's CPU a hand on PostgreSQL and 1.23 times its hands a second
(docs/performance-log.md, "psycopg's waits on the event loop").
"""

import asyncio
import select
from collections.abc import Generator
from typing import TypeVar

from psycopg.waiting import Ready, Wait

T = TypeVar("T")


class SocketWaits:
    """One connection's waits on the event loop, and the reader the loop keeps on its socket
    between them. It sets no timer: the statement and lock timeouts are the server's
    (`api.db.database._timeouts`).

    The reader is taken off (`stop`) before the socket closes, when a wait is for writing
    too, and when the socket turns readable with nobody waiting (a connection the server
    closed, a notice): the next wait reads what is there, and a reader kept on a socket that
    stays readable would wake the loop on every turn."""

    __slots__ = ("_fileno", "_loop", "_waiter")

    def __init__(self) -> None:
        self._loop: asyncio.AbstractEventLoop | None = None
        self._fileno = -1
        self._waiter: asyncio.Future[None] | None = None

    async def waited(self, gen: Generator[Wait, Ready | int, T], state: Wait, fileno: int) -> T:
        """psycopg's generator, waiting in `state`, driven to its end on the loop.

        A task cancelled here leaves the exchange with the server half done: the connection
        must then be abandoned (`LoopConnection._abandon`)."""
        loop = asyncio.get_running_loop()
        try:
            while True:
                if state == Wait.R:
                    await self._readable(loop, fileno)
                    ready: int = Ready.R
                else:
                    self.stop()
                    ready = await _ready_for(loop, fileno, state)
                state = sent_while_writable(gen, gen.send(ready), fileno)
        except StopIteration as done:
            return done.value  # type: ignore[no-any-return]

    def stop(self) -> None:
        """Take the reader off the socket, if it is on. On the loop's thread, as every wait."""
        loop, fileno = self._loop, self._fileno
        if loop is None:
            return
        self._loop, self._fileno = None, -1
        if not loop.is_closed():
            loop.remove_reader(fileno)

    async def _readable(self, loop: asyncio.AbstractEventLoop, fileno: int) -> None:
        if self._loop is not loop or self._fileno != fileno:
            self.stop()
            loop.add_reader(fileno, self._woken)
            self._loop, self._fileno = loop, fileno
        waiter = loop.create_future()
        self._waiter = waiter
        try:
            await waiter
        finally:
            self._waiter = None

    def _woken(self) -> None:
        waiter = self._waiter
        if waiter is None or waiter.done():
            self.stop()
            return
        waiter.set_result(None)


async def _ready_for(loop: asyncio.AbstractEventLoop, fileno: int, state: Wait) -> int:
    """The socket's readiness once it is ready for `state`, by readers and writers added for
    this wait alone (a wait to write is rare: `sent_while_writable`)."""
    woken = loop.create_future()
    got = 0

    def wake(ready: int) -> None:
        nonlocal got
        got |= ready
        if not woken.done():
            woken.set_result(None)

    if state & Wait.R:
        loop.add_reader(fileno, wake, Ready.R)
    if state & Wait.W:
        loop.add_writer(fileno, wake, Ready.W)
    try:
        await woken
    finally:
        if state & Wait.R:
            loop.remove_reader(fileno)
        if state & Wait.W:
            loop.remove_writer(fileno)
    return got


def sent_while_writable(gen: Generator[Wait, Ready | int, T], state: Wait, fileno: int) -> Wait:
    """psycopg's generator, in `state`, driven on in place for as long as it asks to write
    and the socket is writable (nearly always): the state it must wait in, or StopIteration
    with its result."""
    while state & Wait.W and (ready := _ready_now(fileno, state)):
        state = gen.send(ready)
    return state


def _ready_now(fileno: int, state: int) -> int:
    """The socket's readiness for `state` without waiting: a write seldom has to wait, and
    asking the kernel costs less than a turn of the loop."""
    poll = select.poll()
    poll.register(fileno, (select.POLLIN if state & Wait.R else 0) | select.POLLOUT)
    ready = 0
    for _, events in poll.poll(0):
        if events & select.POLLIN:
            ready |= Ready.R
        if events & select.POLLOUT:
            ready |= Ready.W
    return ready
