"""The smallest prototype of the hand path: what placing and deciding a hand costs with the
product's own statements, engine and ledger code, and nothing around them but an ASGI
callable on one kept connection.

`python -m benchmarks.lean_hand --port P` serves `POST /v1/hands` and `POST
/v1/hands/{id}/decision` on `CASINO_WAR_DATABASE_URL` (SQLite, one process), served by
`api.server.serve` like the do-nothing endpoint. A hand writes the rows the service writes,
through the same functions (`api.domain.hands.store`, the hands service's `write_new_hand`
and `decided_record`, `deal` and `decide` in `casino.hand`), so `casino-war audit` passes on
its database; a key's record is looked up and written as `api.http.idempotency` does. What
it leaves out is what the goal's question is about: Litestar, the SQLAlchemy `Session` and
its pool (one connection is kept, and each request is one `Connection.begin()`), the hot
path's generality, the access log and the security headers, the refusals' problem bodies (a
refusal is a bare status), protected players' checks, and opening accounts (every account a
hand moves must be open: `prepared` has the service set the database up and play on it
first). The answer is the hand's id, status and money, not the whole view.

It is a measuring instrument, not a second implementation: `benchmarks.hot_path` measures
its server CPU per hand, and `benchmarks.server_instructions` its instructions per hand,
beside the service's and the do-nothing request's.
"""

import argparse
import functools
import os
import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

import msgspec
from litestar.enums import ScopeType
from litestar.types import HTTPResponseStartEvent, Receive, Scope, Send
from sqlalchemy import Connection

from api.domain.hands import postings, store
from api.domain.hands.postings import HandAccounts, HandRef
from api.domain.hands.service import NEW_HAND, decided_record, write_new_hand
from api.domain.players.turn import lock_player_on
from api.domain.tokens.service import hash_token
from api.errors import DomainError
from api.http.hardening import read_body
from api.http.idempotency import INSERT_RECORD, RECORD_BY_KEY, fingerprint
from api.server import serve
from benchmarks import http_load, servers
from benchmarks.plan import Plan
from casino.errors import GameError
from casino.fairness import HandSeeds
from casino.hand import Action, deal, decide, play
from casino.rules import TableRules
from ledger.database import make_engine
from ledger.driver import Driver, Sql
from ledger.errors import LedgerError
from ledger.fresh import AccountBook, read_balance

_DECISION = re.compile(r"/v1/hands/(\d+)/decision")
_TOKEN = Sql.of(
    "SELECT id, player_id FROM api_tokens WHERE token_hash = :hash AND revoked_at IS NULL"
)


class Refusal(Exception):
    """A request the prototype refuses; nothing it did is kept."""

    def __init__(self, status: int) -> None:
        super().__init__(status)
        self.status = status


class LeanHands:
    """The two commands on one kept connection, in the order the service runs them."""

    def __init__(self, connection: Connection) -> None:
        self._connection = connection
        self._driver = Driver(connection)
        self._callers: dict[str, tuple[int, int]] = {}  # token -> (token id, player id)
        self._rules: dict[int, TableRules] = {}
        self._accounts = AccountBook()

    def caller(self, token: str) -> tuple[int, int]:
        """The token's id and player, looked up once (the service's cache, at its longest)."""
        found = self._callers.get(token)
        if found is None:
            with self._connection.begin():
                row = self._driver.first(_TOKEN, {"hash": hash_token(token)})
            if row is None or row[1] is None:
                raise Refusal(401)
            found = self._callers[token] = (int(row[0]), int(row[1]))
        return found

    def run(self, token: str, key: str, path: str, body: dict[str, Any]) -> tuple[int, bytes]:
        """One command in one transaction with its key's record, as `Idempotency.run` does:
        a key seen before replays its answer, or is refused if the request differs."""
        token_id, player_id = self.caller(token)
        caller = f"token:{token_id}"
        request_hash = fingerprint("POST", path, body)
        with self._connection.begin():
            earlier = self._driver.first(RECORD_BY_KEY, {"caller": caller, "key": key})
            if earlier is not None:
                if earlier[0] != request_hash:
                    raise Refusal(422)
                return int(earlier[1]), str(earlier[2]).encode()
            decision = _DECISION.fullmatch(path)
            if decision is not None:
                answer = self.decide(player_id, token_id, int(decision[1]), body)
            elif path == "/v1/hands":
                answer = self.place(player_id, token_id, body)
            else:
                raise Refusal(404)
            status = 201 if decision is None else 200
            encoded = msgspec.json.encode(answer)
            self._driver.execute(
                INSERT_RECORD,
                {
                    "caller": caller,
                    "key": key,
                    "request_hash": request_hash,
                    "response_status": status,
                    "response_body": encoded.decode(),
                    "created_at": self._driver.time(datetime.now(UTC)),
                },
            )
        return status, encoded

    def place(self, player_id: int, token_id: int, body: dict[str, Any]) -> dict[str, Any]:
        """`open_hand`'s steps for a player without protections, on accounts already open."""
        driver = self._driver
        table_id, bet = int(body["table_id"]), int(body["bet"])
        tie_bet = int(body.get("tie_bet", 0))
        if lock_player_on(driver, player_id):
            raise Refusal(501)  # protected players' checks are not prototyped
        rules = self._rules.get(table_id) or store.table_rules(driver, table_id)
        if rules is None:
            raise Refusal(404)
        self._rules[table_id] = rules
        accounts = HandAccounts.of(player_id, rules.currency)
        found = store.opening(driver, player_id, table_id, accounts)
        if found.unfinished_hand is not None or not found.table_open:
            raise Refusal(409)
        rules.check_wager(bet, tie_bet)
        hand = deal(
            rules.game, HandSeeds(found.server_seed, found.client_seed, found.nonce), bet, tie_bet
        )
        if found.wallet_balance < hand.total_staked:
            raise Refusal(422)
        rows = self._accounts.find(driver, [spec.code for spec in accounts.specs()])
        placing = HandRef(NEW_HAND, player_id, table_id, token_id)
        hand_id, record = write_new_hand(driver, placing, found, rules, hand, accounts, rows)
        return {
            "id": hand_id,
            "status": hand.status.value,
            "net": hand.net,
            "balance_after": record["balance_after"],
        }

    def decide(
        self, player_id: int, token_id: int, hand_id: int, body: dict[str, Any]
    ) -> dict[str, Any]:
        """`decide_hand`'s steps for the hand's own player."""
        driver = self._driver
        action = Action(body["action"])
        lock_player_on(driver, player_id)
        found = store.deciding(driver, hand_id)
        if found is None or found.player_id != player_id:
            raise Refusal(404)
        seeds = HandSeeds(found.server_seed, found.client_seed, found.nonce)
        recorded = Action(found.decision) if found.decision is not None else None
        hand = decide(play(found.rules.game, seeds, found.bet, found.tie_bet, recorded), action)
        accounts = HandAccounts.of(player_id, found.currency)
        wallet = read_balance(driver, accounts.wallet.code)
        if wallet < hand.raise_amount:
            raise Refusal(422)
        rows = self._accounts.find(driver, [spec.code for spec in accounts.specs()])
        ref = HandRef(hand_id, player_id, found.table_id, token_id)
        steps = [postings.settlement(ref, hand, accounts, "player")]
        if action is Action.WAR:
            steps.insert(0, postings.raise_for_war(ref, hand, accounts))
        decided = decided_record(hand, action, "player", token_id, wallet)
        postings.post(driver, accounts, rows, steps, posted_at=decided["settled_at"])
        store.settle_hand(driver, hand_id, decided)
        return {
            "id": hand_id,
            "status": hand.status.value,
            "net": hand.net,
            "balance_after": decided["balance_after"],
        }


async def app(scope: Scope, receive: Receive, send: Send) -> None:
    """The ASGI callable uvicorn serves: `/ready`, and the two commands."""
    if scope["type"] != ScopeType.HTTP:
        return
    path, method = scope["path"], scope.get("method")
    headers = dict(scope["headers"])
    body = await read_body(receive)
    status, answer = (200 if path == "/ready" else 404), b"{}"
    if method == "POST":
        try:
            authorization = headers.get(b"authorization", b"").decode()
            key = headers[b"idempotency-key"].decode()
            request = msgspec.json.decode(body)
            token = authorization.removeprefix("Bearer ")
            status, answer = _hands().run(token, key, path, request)
        except Refusal as refused:
            status = refused.status
        except (GameError, LedgerError, DomainError):  # the service's refusals
            status = 422
        except (KeyError, ValueError, msgspec.DecodeError):
            status = 400
    await answer_with(send, status, answer)


async def answer_with(send: Send, status: int, body: bytes) -> None:
    """A JSON answer, as bare as a prototype's: its status, its media type, its body."""
    start: HTTPResponseStartEvent = {
        "type": "http.response.start",
        "status": status,
        "headers": [(b"content-type", b"application/json")],
    }
    await send(start)
    await send({"type": "http.response.body", "body": body, "more_body": False})


@contextmanager
def serving(database_url: str) -> Iterator[servers.Server]:
    """The prototype served on a database `prepared` set up, until the block ends."""
    command = [sys.executable, "-m", "benchmarks.lean_hand"]
    with servers.launched(command, {"CASINO_WAR_DATABASE_URL": database_url}, "/ready") as server:
        server.wait_ready()
        yield server


def prepared(database_url: str, plan: Plan) -> http_load.Service:
    """A database for the prototype, set up by the service itself, each player having
    played there for a moment, so that every account a hand moves is open (the prototype
    opens none)."""
    with servers.casino_war(database_url, 1) as server:
        server.wait_ready()
        service = http_load.set_up(server.base_url, database_url, plan)
        for _ in range(10):  # on a loaded host a player may not settle a hand in a second
            http_load.hands_point(service, replace(plan, duration_seconds=1.0), max(plan.clients))
            if _players_with_a_settled_hand(database_url) >= len(service.players):
                return service
    raise RuntimeError("some players settled no hand: their accounts are not all open")


def _players_with_a_settled_hand(database_url: str) -> int:
    engine = make_engine(database_url)
    try:
        with engine.connect() as connection:
            query = "SELECT COUNT(DISTINCT player_id) FROM hands WHERE settled_at IS NOT NULL"
            return int(connection.exec_driver_sql(query).scalar_one())
    finally:
        engine.dispose()


@functools.cache
def _hands() -> LeanHands:
    """Connected on the first request, not on import: the benchmarks import this module."""
    engine = make_engine(os.environ["CASINO_WAR_DATABASE_URL"])
    return LeanHands(engine.connect())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8002)
    args = parser.parse_args()
    serve("benchmarks.lean_hand:app", host=args.host, port=args.port, workers=1)


if __name__ == "__main__":
    main()
