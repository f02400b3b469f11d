"""Loopback ports for the servers the tests start, never the same in two test processes.

The suite runs in several processes (pytest-xdist), and a port found free by binding port 0
is free only until its server binds it: another process's server could take it first, and a
test would then talk to another test's server and database. So each test process claims a
block of ports of its own, below the kernel's range for port 0 (32768 on), by keeping the
block's first port bound for as long as it runs, and picks its servers' ports among the
block's others, each checked free when picked.
"""

import functools
import random
import socket

_FIRST_BLOCK = 20_000
_BLOCK = 100
_BLOCKS = 120  # ports 20,000-31,999


def _bound(port: int) -> socket.socket | None:
    """A socket bound to `port` on the loopback, or None if something holds the port."""
    probe = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        probe.bind(("127.0.0.1", port))
    except OSError:
        probe.close()
        return None
    return probe


def claim_block() -> tuple[socket.socket, range]:
    """A block whose first port this process could bind, kept bound as its claim (the
    socket), and the block's other ports."""
    for block in random.sample(range(_BLOCKS), _BLOCKS):
        start = _FIRST_BLOCK + block * _BLOCK
        claim = _bound(start)
        if claim is not None:
            return claim, range(start + 1, start + _BLOCK)
    raise RuntimeError(f"no block of {_BLOCK} loopback ports from {_FIRST_BLOCK} is free")


@functools.cache
def own_block() -> tuple[socket.socket, range]:
    """This process's block, claimed on first use; the cache keeps its claim open, and so the
    block this process's own, until the process ends."""
    return claim_block()


def free_port() -> int:
    """A port of this process's block that nothing holds now; the server to be started on
    it is the only one in the suite that can bind it."""
    _, ports = own_block()
    for port in random.sample(ports, len(ports)):
        probe = _bound(port)
        if probe is not None:
            probe.close()
            return port
    raise RuntimeError(f"every port of {ports} is in use")
