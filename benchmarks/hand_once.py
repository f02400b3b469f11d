"""The hands that `benchmarks.hand_instructions` counts, alone in their process:
`python -m benchmarks.hand_once HANDS [--layer LAYER] [--postgres]` plays HANDS hands through
the service's ASGI application in this process, on a fresh SQLite database (or a scratch
PostgreSQL database), after a warm-up.

Served hands deal from fresh random seeds, so two runs play different cards: a run with a
few more ties than the other (a tie costs a second request) moves its count by more than a
lever worth a percent. Here every run deals the same cards: the player's seeds are pinned
(their service's seed generators replaced in this process alone) and the Idempotency-Keys
numbered, so a count repeats and two builds compare hand for hand. The requests are handed
to the application as the server hands them (ASGI, the hot path in front unless `--layer
framework`), without sockets: what is counted is the service's own work, its
`Idempotency-Key` and its answer's bytes included, and SQLite's (PostgreSQL's own work runs
in its server, and is not counted).

`--layer` plays the same hands through less of the service, each layer inside the one
before it, so that two counts price what a layer adds (docs/performance.md, "A hand's
instructions by layer"): `hot_path` (the default) and `framework` hand HTTP requests to the
application; `command` runs the hot path's operations through `Idempotency.execute`, as
`api.http.hot_path` does once a request is accepted (the key's fingerprint, claim and
record, no HTTP); `unit` runs those operations alone, each in a unit of work of its own
(the hand's reads, game, writes and COMMIT, and its answer dumped as the key's record
dumps it); `transaction` runs a unit of work with nothing in it, once a hand (what a unit
of work's BEGIN, COMMIT and the code around them cost: a hand makes 1.08 units on these
cards, a tie being a second request. On PostgreSQL an empty unit sends neither: psycopg
begins at a unit's first statement, so there it is the code around them alone).
"""

import argparse
import asyncio
import itertools
import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, Literal, Protocol, cast, get_args

from litestar import Litestar
from litestar.testing import AsyncTestClient

import api.domain.seeds.service as seeds
import migrations
from api.app import HOT_COMMANDS, create_app
from api.domain.tokens.service import Principal
from api.http.hot_path import HotCall, HotCommand
from api.http.idempotency import fingerprint
from api.settings import Settings
from benchmarks import http_load
from benchmarks.scratch import PostgresServer, admin_url, scratch_database

Layer = Literal["hot_path", "framework", "command", "unit", "transaction"]
LAYERS: tuple[Layer, ...] = get_args(Layer)

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


class Player(Protocol):
    """What `play_hands` plays through: HTTP, or a layer inside it."""

    async def post(self, path: str, body: dict[str, Any], /) -> tuple[int, dict[str, Any]]:
        """The answer's status and JSON body."""
        ...


class AsgiPlayer:
    """A funded player's requests, handed to `app` as an ASGI server hands them."""

    def __init__(self, app: Litestar, token: str) -> None:
        self._app = app
        self._token = token.encode()
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


def _hot_call(
    path: str, body: dict[str, Any], principal: Principal, settings: Settings
) -> tuple[HotCommand, HotCall]:
    """The hot path's command for `path`, and its call, as it builds them for a request it
    accepts."""
    for command in HOT_COMMANDS:
        matched = command.path.fullmatch(path)
        if matched is not None:
            ids = tuple(int(group) for group in matched.groups())
            data = command.body.model_validate(body)
            return command, HotCall(ids, data, principal, settings)
    raise ValueError(f"no command on the hot path serves {path}")


class CommandPlayer:
    """A player's requests through `Idempotency.execute`, as the hot path runs an accepted
    one: the key's fingerprint, claim and record, no HTTP."""

    def __init__(self, app: Litestar, principal: Principal) -> None:
        self._state = app.state
        self._principal = principal
        self._keys: Iterator[int] = itertools.count()

    async def post(self, path: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        command, call = _hot_call(path, body, self._principal, self._state.settings)
        answer = await self._state.idempotency.execute(
            self._principal,
            # apart from the warm-up's keys, which would replay
            f"hand-once-command-{next(self._keys):012d}",
            fingerprint("POST", path, call.body.model_dump(mode="json")),
            command.operation(call),
            status_code=command.status_code,
        )
        return answer.status, cast(dict[str, Any], answer.body)


class UnitPlayer:
    """A player's operations alone, each in a unit of work of its own, its answer dumped
    there as `Idempotency` dumps it: no key."""

    def __init__(self, app: Litestar, principal: Principal) -> None:
        self._state = app.state
        self._principal = principal

    async def post(self, path: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        command, call = _hot_call(path, body, self._principal, self._state.settings)
        operation = command.operation(call)
        database = self._state.database

        def unit() -> dict[str, Any]:
            with database.transaction() as session:
                answer, _ = operation(session).bodies()
                return answer

        # where `Idempotency.execute` runs its units (`Database.run_units`)
        return command.status_code, await database.run_units(unit)


class EmptyUnitPlayer:
    """An empty unit of work for each hand, answered as a settled hand so that no decision
    follows: what a unit of work costs before it does anything."""

    def __init__(self, app: Litestar, _: Principal) -> None:
        self._database = app.state.database

    async def post(self, _path: str, _body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        await self._database.run_units(self._empty_unit)
        return 201, {"status": "settled"}

    def _empty_unit(self) -> None:
        with self._database.transaction():
            pass


_INNER_PLAYERS: dict[Layer, Callable[[Litestar, Principal], Player]] = {
    "command": CommandPlayer,
    "unit": UnitPlayer,
    "transaction": EmptyUnitPlayer,
}


async def play_hands(player: Player, table_id: int, hands: int) -> int:
    """`hands` hands, each tie to war; the requests made."""
    requests = 0
    for _ in range(hands):
        status, hand = await player.post("/v1/hands", {"table_id": table_id, "bet": 100})
        requests += 1
        if status != 201:
            raise RuntimeError(f"a hand was refused: {status} {hand}")
        if hand["status"] == "awaiting_decision":
            decision = f"/v1/hands/{hand['id']}/decision"
            status, hand = await player.post(decision, {"action": "war"})
            requests += 1
            if status != 200:
                raise RuntimeError(f"a decision was refused: {status} {hand}")
    return requests


async def play(url: str, hands: int, *, layer: Layer = "hot_path") -> int:
    """A funded player's `hands` hands through `layer`, after a warm-up over HTTP, on the
    fresh database at `url`; the requests (or, for `transaction`, the empty units of work)
    they made."""
    migrations.upgrade(url)
    settings = Settings(database_url=url, token_cache_seconds=3600, hot_path=layer != "framework")
    app = create_app(settings)
    async with AsyncTestClient(app=app, base_url="http://hand-once.local") as client:
        client.headers["Authorization"] = f"Bearer {http_load.operator_token(url)}"
        funded = await http_load.funded_player(client, 0, deposit=10**12)
        table_id = http_load.standard_table_in((await client.get("/v1/tables")).json())
        over_http = AsgiPlayer(app, funded.token)
        await play_hands(over_http, table_id, WARM_UP_HANDS)
        if layer in ("hot_path", "framework"):
            return await play_hands(over_http, table_id, hands)
        principal = await app.state.authenticator.known_caller(
            f"Bearer {funded.token}", "127.0.0.1"
        )
        if principal is None:
            raise RuntimeError("the funded player's token was refused")
        return await play_hands(_INNER_PLAYERS[layer](app, principal), table_id, hands)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("hands", type=int)
    parser.add_argument("--layer", choices=LAYERS, default="hot_path", help="how far in to play")
    parser.add_argument("--postgres", action="store_true", help=_POSTGRES_HELP)
    arguments = parser.parse_args(argv)
    # The server's URL from the environment, never the command line, which a failed count
    # quotes.
    server = PostgresServer(admin_url(None)) if arguments.postgres else None
    kind = "postgresql" if arguments.postgres else "sqlite"
    with pinned_seeds(), scratch_database(kind, server, "hand_once") as url:
        asyncio.run(play(url, arguments.hands, layer=arguments.layer))


_POSTGRES_HELP = (
    "on a scratch database of the PostgreSQL server named by $CASINO_WAR_BENCH_POSTGRES_URL, "
    "else $CASINO_WAR_TEST_POSTGRES_URL, else this machine's (dropped afterwards)"
)


if __name__ == "__main__":
    main()
