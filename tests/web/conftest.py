"""The pages' tests drive the real app, as the API's do: the same fixtures, and a real
server for the browser."""

from collections.abc import Iterator

import pytest

from tests.api.conftest import LiveServer, client, settings

__all__ = ["client", "server", "settings"]


@pytest.fixture
def server(database_url: str) -> Iterator[LiveServer]:
    """`casino-war serve` in a process of its own, one worker, on a free port."""
    live = LiveServer(database_url, workers=1)
    live.start()
    yield live
    live.stop()
