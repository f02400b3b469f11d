"""How the service listens: the property that keeps several workers from waiting on Nagle."""

import socket

import pytest

from api import server
from api.server import listening_socket, loop_and_parser


def test_the_listening_socket_is_tcp_so_asyncio_disables_nagle() -> None:
    sock = listening_socket("127.0.0.1", 0)
    try:
        assert sock.proto == socket.IPPROTO_TCP
        assert sock.get_inheritable()
    finally:
        sock.close()


def test_the_server_runs_on_uvloop_and_httptools_when_installed() -> None:
    assert loop_and_parser() == ("uvloop", "httptools")


def test_without_the_standard_extra_the_server_falls_back_to_asyncio_and_h11(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(server, "find_spec", lambda _name: None)
    assert loop_and_parser() == ("asyncio", "h11")
