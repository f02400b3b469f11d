"""Serving an ASGI app with uvicorn, one or several worker processes."""

import logging
import socket
import sys
from importlib.util import find_spec

import uvicorn
from uvicorn.supervisors import Multiprocess

SERVING_WITH = "serving with loop=%s http=%s"
"""Logged once at start-up: the benchmark reads it to report how each server ran."""


def listening_socket(host: str, port: int) -> socket.socket:
    """A TCP socket bound with `proto=IPPROTO_TCP`.

    asyncio turns Nagle's algorithm off only on sockets whose proto is TCP; the socket uvicorn
    binds itself for several workers has proto 0, so every response would wait for the
    client's delayed ACK (about 40 ms on loopback).
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.set_inheritable(True)
    return sock


def loop_and_parser() -> tuple[str, str]:
    """uvloop and httptools (uvicorn's `standard` extra) when installed: both in C, they spend
    a fraction of the CPU per request of asyncio's own loop and the pure-Python h11, which are
    the fallback. Named rather than left to uvicorn's "auto", so that the choice is logged."""
    loop = "uvloop" if find_spec("uvloop") is not None else "asyncio"
    http = "httptools" if find_spec("httptools") is not None else "h11"
    return loop, http


def serve(app: str, *, host: str, port: int, workers: int, announce: str = "") -> None:
    """Serve the app named `module:attribute` until interrupted; `announce` is printed on
    stderr once the port is bound (a busy port fails before it)."""
    loop, http = loop_and_parser()
    config = uvicorn.Config(
        app,
        host=host,
        port=port,
        workers=workers,
        loop=loop,
        http=http,
        log_level="info",
        access_log=False,
        server_header=False,
    )
    logging.getLogger("uvicorn.error").info(SERVING_WITH, loop, http)
    sock = listening_socket(host, port)
    if announce:
        print(announce, file=sys.stderr, flush=True)
    if workers == 1:
        uvicorn.Server(config).run(sockets=[sock])
    else:
        Multiprocess(config, sockets=[sock]).run()
