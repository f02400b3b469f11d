"""Racing requests and restarts against a real server with several worker processes."""

import os
import signal
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
from sqlalchemy import text

from api.db.database import Database
from api.domain.tokens.service import Role
from api.http.idempotency import IN_FLIGHT
from ledger.chains import chain_for
from ledger.verify import verify_ledger
from tests.api.conftest import LiveServer, new_key


def _post(server: LiveServer, token: str, path: str, body: dict[str, Any]) -> httpx.Response:
    headers = {"Authorization": f"Bearer {token}", "Idempotency-Key": new_key()}
    return httpx.post(f"{server.base_url}{path}", json=body, headers=headers, timeout=60)


def _get(server: LiveServer, token: str, path: str) -> Any:
    response = httpx.get(
        f"{server.base_url}{path}", headers={"Authorization": f"Bearer {token}"}, timeout=60
    )
    return response.json()


def _funded_player(server: LiveServer, operator: str, amount: int) -> tuple[int, str]:
    player = _post(server, operator, "/v1/players", {}).json()
    paid = _post(
        server,
        operator,
        "/v1/cashier/deposits",
        {"player_id": player["id"], "amount": amount, "currency": "USD"},
    )
    assert paid.status_code == 201, paid.text
    return player["id"], player["token"]


def _ledger_is_sound(server: LiveServer) -> None:
    database = Database.connect(server.database_url)
    try:
        with database.reading() as session:
            report = verify_ledger(session)
    finally:
        database.dispose()
    assert report.ok, report.problems


def test_racing_withdrawals_never_overdraw_the_wallet(live_server: LiveServer) -> None:
    operator = live_server.token(Role.OPERATOR)
    player_id, token = _funded_player(live_server, operator, 1_000)
    body = {"player_id": player_id, "amount": 100, "currency": "USD"}
    with ThreadPoolExecutor(max_workers=20) as pool:
        responses = list(
            pool.map(
                lambda _: _post(live_server, operator, "/v1/cashier/withdrawals", body), range(20)
            )
        )
    statuses = sorted(r.status_code for r in responses)
    assert statuses == [201] * 10 + [422] * 10
    assert {r.json()["code"] for r in responses if r.status_code == 422} == {"insufficient_funds"}
    assert _get(live_server, token, "/v1/me")["balances"][0]["available"] == 0
    _ledger_is_sound(live_server)


def test_racing_bets_on_one_wallet_keep_the_books_exact(live_server: LiveServer) -> None:
    operator = live_server.token(Role.OPERATOR)
    _, token = _funded_player(live_server, operator, 3_000)
    table_id = _get(live_server, token, "/v1/tables")["items"][0]["id"]
    bet = {"table_id": table_id, "bet": 1_000}
    with ThreadPoolExecutor(max_workers=16) as pool:
        responses = list(pool.map(lambda _: _post(live_server, token, "/v1/hands", bet), range(16)))

    assert {r.status_code for r in responses} <= {201, 409, 422}
    refused_codes = {r.json()["code"] for r in responses if r.status_code != 201}
    assert refused_codes <= {"insufficient_funds", "unfinished_hand"}
    hands = _get(live_server, token, "/v1/hands?limit=200")["items"]
    assert len(hands) == sum(r.status_code == 201 for r in responses)
    wallet = _get(live_server, token, "/v1/me")["balances"][0]
    settled_net = sum(h["net"] for h in hands if h["status"] == "settled")
    held = sum(h["total_staked"] for h in hands if h["status"] == "awaiting_decision")
    assert wallet["available"] == 3_000 + settled_net - held >= 0
    assert wallet["held"] == held
    _ledger_is_sound(live_server)


def test_a_tie_awaiting_its_decision_survives_a_restart(live_server: LiveServer) -> None:
    operator = live_server.token(Role.OPERATOR)
    _, token = _funded_player(live_server, operator, 100_000)
    table_id = _get(live_server, token, "/v1/tables")["items"][0]["id"]
    for _ in range(500):
        hand = _post(live_server, token, "/v1/hands", {"table_id": table_id, "bet": 100}).json()
        if hand["status"] == "awaiting_decision":
            break
    else:
        raise AssertionError("no tie in 500 hands")

    live_server.stop()
    live_server.start()

    resumed = _get(live_server, token, f"/v1/hands/{hand['id']}")
    assert resumed["status"] == "awaiting_decision"
    decided = _post(live_server, token, f"/v1/hands/{hand['id']}/decision", {"action": "war"})
    assert decided.status_code == 200, decided.text
    assert decided.json()["status"] == "settled"
    _ledger_is_sound(live_server)


def _play_until(server: LiveServer, token: str, table_id: int, stop: threading.Event) -> set[str]:
    """Hands (a tie goes to war) until told to stop; the keys of every command sent, each
    retried with its key until it is answered, so a request cut off by a dying worker is
    either replayed or run once now."""
    keys: set[str] = set()

    def command(path: str, body: dict[str, Any]) -> dict[str, Any]:
        key = new_key()
        keys.add(key)
        headers = {"Authorization": f"Bearer {token}", "Idempotency-Key": key}
        for _ in range(100):
            try:
                answer = httpx.post(
                    f"{server.base_url}{path}", json=body, headers=headers, timeout=60
                )
            except httpx.HTTPError:  # the worker died under it: ask again, same key
                time.sleep(0.1)
                continue
            if _still_running(answer):  # the first try still holds the key: ask again
                time.sleep(0.1)
                continue
            assert answer.status_code in (200, 201), answer.text
            result: dict[str, Any] = answer.json()
            return result
        raise AssertionError(f"{path} was never answered")

    while not stop.is_set():
        hand = command("/v1/hands", {"table_id": table_id, "bet": 100})
        if hand["status"] == "awaiting_decision":
            command(f"/v1/hands/{hand['id']}/decision", {"action": "war"})
    return keys


def _still_running(answer: httpx.Response) -> bool:
    return answer.status_code == 409 and answer.json().get("code") == IN_FLIGHT


def test_players_on_one_chain_racing_hands_and_wars_keep_its_links_whole(
    live_server: LiveServer,
) -> None:
    """Players whose money moves on one ledger chain share its house account and its head:
    a hand takes both with its opening read (PostgreSQL), a war's raise and settlement as
    they post, always the accounts before the head. Racing, neither waits on the other in
    the opposite order, and every hand and war is answered."""
    operator = live_server.token(Role.OPERATOR)
    players = _players_on_one_chain(live_server, operator, count=3)
    table_id = _get(live_server, players[0][1], "/v1/tables")["items"][0]["id"]
    stop = threading.Event()
    with ThreadPoolExecutor(max_workers=len(players)) as pool:
        played = [
            pool.submit(_play_until, live_server, token, table_id, stop) for _, token in players
        ]
        try:
            time.sleep(3)
        finally:
            stop.set()
        keys = set().union(*(future.result() for future in played))
    assert len(keys) > 3 * len(players)  # they raced, not took turns
    _ledger_is_sound(live_server)


def _players_on_one_chain(server: LiveServer, operator: str, count: int) -> list[tuple[int, str]]:
    """Funded players, made until `count` of them post on one chain (`chain_for`)."""
    by_chain: dict[int, list[tuple[int, str]]] = {}
    for _ in range(20 * count):
        player = _funded_player(server, operator, 1_000_000)
        sharing = by_chain.setdefault(chain_for(str(player[0])), [])
        sharing.append(player)
        if len(sharing) == count:
            return sharing
    raise AssertionError(f"no {count} players on one chain")


def test_a_worker_killed_under_load_loses_and_doubles_nothing(live_server: LiveServer) -> None:
    operator = live_server.token(Role.OPERATOR)
    players = [_funded_player(live_server, operator, 1_000_000) for _ in range(4)]
    table_id = _get(live_server, players[0][1], "/v1/tables")["items"][0]["id"]
    stop = threading.Event()
    with ThreadPoolExecutor(max_workers=len(players)) as pool:
        played = [
            pool.submit(_play_until, live_server, token, table_id, stop) for _, token in players
        ]
        try:  # the players stop even if the kill fails, so the test fails rather than hangs
            time.sleep(2)
            workers = live_server.worker_pids()
            assert len(workers) == live_server.workers
            os.kill(workers[0], signal.SIGKILL)
            time.sleep(2)
        finally:
            stop.set()
        keys = set().union(*(future.result() for future in played))

    database = Database.connect(live_server.database_url)
    try:
        with database.reading() as session:
            placed, decided, unsettled = session.execute(
                text("SELECT COUNT(*), COUNT(decision), COUNT(*) - COUNT(settled_at) FROM hands")
            ).one()
    finally:
        database.dispose()
    assert placed + decided == len(keys)  # every command took effect exactly once
    assert unsettled == 0
    assert workers[0] not in live_server.worker_pids()
    assert httpx.get(f"{live_server.base_url}/ready").status_code == 200
    _ledger_is_sound(live_server)
