"""How the service listens: the property that keeps several workers from waiting on Nagle."""

import socket

from api.server import listening_socket


def test_the_listening_socket_is_tcp_so_asyncio_disables_nagle() -> None:
    sock = listening_socket("127.0.0.1", 0)
    try:
        assert sock.proto == socket.IPPROTO_TCP
        assert sock.get_inheritable()
    finally:
        sock.close()
