"""psycopg's waits for its socket, on the event loop (`api.db.loop_units`).

psycopg drives every exchange with the server as a generator that says when it must wait for
its socket, and so do the driver's own exchanges (`ledger.pq_exchange`); a unit of work on
the loop hands those waits to the loop. Two things make that cheap. An exchange is driven in
place for as long as it needs no wait: through psycopg's cursor six in ten of a hand's
exchanges never waited (entering a pipeline, queueing a statement in one, a commit with
nothing left to send), and handing each to the loop cost two switches of greenlet and a
coroutine. And a connection keeps the loop's reader on its socket from one wait for an
answer to the next, where adding it for each wait and removing it after cost the kernel
calls and the loop a poll handle made and closed at every wait. Together: 0.958 of a
PostgreSQL hand's instructions in process (docs/performance-log.md, "psycopg's waits on the
event loop").
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

    The reader is taken off (`stop`) before the socket closes and before the connection goes
    back to the pool (`api.db.loop_units`), after a failed exchange (libpq closes the socket
    of a connection it finds lost), when a wait is for writing too, and when the socket is
    readable, in error or hung up with nobody waiting (a connection the server closed or
    reset, a notice): the next wait reads what is there, and a reader kept on a socket that
    stays so would wake the loop on every turn. Every one of those runs on the loop's
    thread: a connection whose reader is on is a kept connection of that loop's units of
    work, and its pool's check-in and close happen there too."""

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
        """Back once the socket is readable. The reader is put on again at every wait: on
        a socket already watched that asks nothing of the kernel, and uvloop, which closes
        its reader on an error on the socket (a connection reset), would never call a
        closed one again; it refuses to reuse it, and the reader is then made anew."""
        if self._loop is not loop or self._fileno != fileno:
            self.stop()
        try:
            loop.add_reader(fileno, self._woken)
        except RuntimeError:
            # uvloop's reader, closed on an error on the socket. A loop closed, or the
            # socket a transport's, raise the same again below: nothing else is caught.
            loop.remove_reader(fileno)
            loop.add_reader(fileno, self._woken)
        self._loop, self._fileno = loop, fileno
        waiter = loop.create_future()
        self._waiter = waiter
        try:
            await waiter
        finally:
            self._waiter = None

    def _woken(self) -> None:
        """The loop's call when the socket is readable or broken. With nobody waiting the
        socket is asked again first: asyncio's selector loop may call for readiness it found
        before the woken wait read its answer, and the reader comes off only a socket that
        would go on waking the loop."""
        waiter = self._waiter
        if waiter is not None:
            if not waiter.done():  # done: a cancelled wait, which stops the reader itself
                waiter.set_result(None)
        elif _readable_or_broken(self._fileno):
            self.stop()


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


def _readable_or_broken(fileno: int) -> bool:
    """Whether the socket would wake a reader now: readable, or in error or hung up (which
    asyncio's loop reports to readers too)."""
    poll = select.poll()
    poll.register(fileno, select.POLLIN)
    return any(
        events & (select.POLLIN | select.POLLERR | select.POLLHUP | select.POLLNVAL)
        for _, events in poll.poll(0)
    )


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
