"""psycopg's waits on the event loop (`api.db.loop_waits`), driven here by a generator of the
same shape over a plain TCP connection, on uvloop (the server's) and asyncio's loop: a
connection reset between two waits for an answer ends the exchange with the reset, instead
of leaving the second wait asleep on a reader uvloop has closed."""

import asyncio
import socket
import struct
from collections.abc import Generator, Iterator

import pytest
from psycopg.waiting import Ready, Wait

from api.db.loop_waits import SocketWaits
from tests.api.conftest import NewLoop


@pytest.fixture
def connected() -> Iterator[tuple[socket.socket, socket.socket]]:
    """A TCP connection's two ends: ours, not blocking, and the peer's."""
    with socket.create_server(("127.0.0.1", 0)) as server:
        ours = socket.create_connection(server.getsockname())
        peer, _ = server.accept()
    ours.setblocking(False)
    with ours, peer:
        yield ours, peer


def _bytes_read(ours: socket.socket, count: int) -> Generator[Wait, Ready | int, bytes]:
    """As psycopg's generators wait: for the socket to be readable, until it has `count`
    bytes."""
    got = b""
    while len(got) < count:
        yield Wait.R
        try:
            got += ours.recv(count - len(got))
        except BlockingIOError:
            continue
    return got


def _reset(peer: socket.socket) -> None:
    peer.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    peer.close()


async def _read(waits: SocketWaits, ours: socket.socket, count: int) -> bytes:
    gen = _bytes_read(ours, count)
    return await asyncio.wait_for(waits.waited(gen, next(gen), ours.fileno()), timeout=5)


def test_a_wait_after_an_answer_reads_the_next_answer(
    new_loop: NewLoop, connected: tuple[socket.socket, socket.socket]
) -> None:
    ours, peer = connected

    async def two_answers() -> list[bytes]:
        waits = SocketWaits()
        loop = asyncio.get_running_loop()
        loop.call_later(0.01, peer.send, b"a")
        first = await _read(waits, ours, 1)
        loop.call_later(0.01, peer.send, b"b")
        return [first, await _read(waits, ours, 1)]

    loop = new_loop()
    try:
        assert loop.run_until_complete(two_answers()) == [b"a", b"b"]
    finally:
        loop.close()


def test_a_connection_reset_between_two_waits_ends_the_second_with_the_reset(
    new_loop: NewLoop, connected: tuple[socket.socket, socket.socket]
) -> None:
    """uvloop closes the reader of a socket in error without calling it: a reader kept on
    from the first wait would never wake the second."""
    ours, peer = connected

    async def answer_then_reset() -> None:
        waits = SocketWaits()
        asyncio.get_running_loop().call_later(0.01, peer.send, b"a")
        await _read(waits, ours, 1)
        peer.send(b"b")
        _reset(peer)
        await asyncio.sleep(0.05)  # the loop sees the reset while nobody waits
        await _read(waits, ours, 3)

    loop = new_loop()
    try:
        with pytest.raises(ConnectionResetError):
            loop.run_until_complete(answer_then_reset())
    finally:
        loop.close()
