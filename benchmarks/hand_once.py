"""The hands that `benchmarks.hand_instructions` counts, alone in their process:
`python -m benchmarks.hand_once HANDS [--framework]` plays HANDS hands through the service's
ASGI application in this process, on a fresh SQLite database, after a warm-up.

Served hands deal from fresh random seeds, so two runs play different cards: a run with a
few more ties than the other (a tie costs a second request) moves its count by more than a
lever worth a percent. Here every run deals the same cards: the player's seeds are pinned
(their service's seed generators replaced in this process alone) and the Idempotency-Keys
numbered, so a count repeats and two builds compare hand for hand. The requests are handed
to the application as the server hands them (ASGI, the hot path in front unless
`--framework`), without sockets: what is counted is the service's own work, its
`Idempotency-Key` and its answer's bytes included, and SQLite's.
"""

import argparse
import asyncio
import itertools
import json
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from litestar import Litestar
from litestar.testing import AsyncTestClient

import api.domain.seeds.service as seeds
import migrations
from api.app import create_app
from api.settings import Settings
from benchmarks import http_load

WARM_UP_HANDS = 50
PINNED_SERVER_SEED = "5eed" * 16
PINNED_CLIENT_SEED = "hand-once"


_PINNED: dict[str, Callable[[], str]] = {
    "new_server_seed": lambda: PINNED_SERVER_SEED,
    "new_client_seed": lambda: PINNED_CLIENT_SEED,
}


@contextmanager
def pinned_seeds() -> Iterator[None]:
    """Every seed pair dealt in this process from the same two seeds, while the block runs."""
    originals = {name: vars(seeds)[name] for name in _PINNED}
    for name, pinned in _PINNED.items():
        setattr(seeds, name, pinned)
    try:
        yield
    finally:
        for name, original in originals.items():
            setattr(seeds, name, original)


class AsgiPlayer:
    """A funded player's requests, handed to `app` as an ASGI server hands them."""

    def __init__(self, app: Litestar, token: str, table_id: int) -> None:
        self._app = app
        self._token = token.encode()
        self._table_id = table_id
        self._keys: Iterator[int] = itertools.count()

    async def post(self, path: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        raw = json.dumps(body).encode()
        headers = [
            (b"host", b"hand-once.local"),
            (b"content-type", b"application/json"),
            (b"content-length", str(len(raw)).encode()),
            (b"authorization", b"Bearer " + self._token),
            (b"idempotency-key", f"hand-once-{next(self._keys):012d}".encode()),
        ]
        scope = {
            "type": "http",
            "asgi": {"version": "3.0"},
            "http_version": "1.1",
            "method": "POST",
            "scheme": "http",
            "path": path,
            "raw_path": path.encode(),
            "root_path": "",
            "query_string": b"",
            "headers": headers,
            "client": ("127.0.0.1", 50000),
            "server": ("127.0.0.1", 80),
            "state": {},
        }
        sent: list[dict[str, Any]] = []

        async def receive() -> dict[str, Any]:
            return {"type": "http.request", "body": raw, "more_body": False}

        async def send(message: dict[str, Any]) -> None:
            sent.append(message)

        await self._app(scope, receive, send)  # type: ignore[arg-type]
        answer = b"".join(message.get("body", b"") for message in sent[1:])
        return int(sent[0]["status"]), json.loads(answer)

    async def play(self, hands: int) -> int:
        """`hands` hands, each tie to war; the requests made."""
        requests = 0
        for _ in range(hands):
            status, hand = await self.post("/v1/hands", {"table_id": self._table_id, "bet": 100})
            requests += 1
            if status != 201:
                raise RuntimeError(f"a hand was refused: {status} {hand}")
            if hand["status"] == "awaiting_decision":
                decision = f"/v1/hands/{hand['id']}/decision"
                status, hand = await self.post(decision, {"action": "war"})
                requests += 1
                if status != 200:
                    raise RuntimeError(f"a decision was refused: {status} {hand}")
        return requests


async def play(directory: Path, hands: int, *, hot_path: bool = True) -> int:
    """A funded player's `hands` hands after the warm-up, on a fresh database in
    `directory`; the requests they made."""
    url = f"sqlite:///{directory / 'hands.db'}"
    migrations.upgrade(url)
    app = create_app(Settings(database_url=url, token_cache_seconds=3600, hot_path=hot_path))
    async with AsyncTestClient(app=app, base_url="http://hand-once.local") as client:
        client.headers["Authorization"] = f"Bearer {http_load.operator_token(url)}"
        funded = await http_load.funded_player(client, 0, deposit=10**12)
        tables = (await client.get("/v1/tables")).json()
        player = AsgiPlayer(app, funded.token, http_load.standard_table_in(tables))
        await player.play(WARM_UP_HANDS)
        return await player.play(hands)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("hands", type=int)
    parser.add_argument("--framework", action="store_true", help="without the hot path")
    arguments = parser.parse_args(argv)
    with pinned_seeds(), tempfile.TemporaryDirectory(prefix="casino-war-hand-once-") as directory:
        asyncio.run(play(Path(directory), arguments.hands, hot_path=not arguments.framework))


if __name__ == "__main__":
    main()
