"""Serving an ASGI app with uvicorn, one or several worker processes."""

import socket

import uvicorn
from uvicorn.supervisors import Multiprocess


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


def serve(app: str, *, host: str, port: int, workers: int) -> None:
    """Serve the app named `module:attribute` until interrupted."""
    config = uvicorn.Config(
        app, host=host, port=port, workers=workers, log_level="info", access_log=False
    )
    sock = listening_socket(host, port)
    if workers == 1:
        uvicorn.Server(config).run(sockets=[sock])
    else:
        Multiprocess(config, sockets=[sock]).run()
