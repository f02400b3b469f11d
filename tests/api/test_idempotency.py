"""Idempotency-Key: at most once per caller and key, whatever the retries."""

import json
from concurrent.futures import ThreadPoolExecutor

import pytest
from litestar.testing import TestClient
from sqlalchemy import Engine, text

from api.app import create_app
from api.db.database import Database
from api.domain.tokens.service import Role, authenticate
from api.http.idempotency import (
    LOCK_KEY,
    LOCK_KEY_AND_PLAYER,
    TAKING_THE_KEYS_LOCK,
    Idempotency,
    advisory_lock_key,
    lock_key_player_and_read,
)
from api.settings import Settings
from ledger.driver import Sql
from tests.api.conftest import Caller, available, issue_test_token, new_player
from tests.locks import until_a_backend_waits_for_a_lock


def test_a_replayed_key_returns_the_first_response_and_moves_nothing(
    operator: Caller, player: Caller
) -> None:
    player_id = player.get("/v1/me").json()["id"]
    body = {"player_id": player_id, "amount": 500, "currency": "USD"}
    first = operator.post("/v1/cashier/deposits", body, key="deposit-1")
    again = operator.post("/v1/cashier/deposits", body, key="deposit-1")
    assert first.status_code == again.status_code == 201
    assert again.json() == first.json()
    assert again.headers["Idempotent-Replayed"] == "true"
    assert "Idempotent-Replayed" not in first.headers
    assert available(player) == first.json()["balance_after"]


def test_a_replayed_hand_is_dealt_once(player: Caller) -> None:
    table_id = player.get("/v1/tables").json()["items"][0]["id"]
    first = player.post("/v1/hands", {"table_id": table_id, "bet": 100}, key="hand-1")
    again = player.post("/v1/hands", {"table_id": table_id, "bet": 100}, key="hand-1")
    assert again.json() == first.json()
    assert len(player.get("/v1/hands").json()["items"]) == 1


def test_a_key_reused_with_another_body_is_refused(operator: Caller, player: Caller) -> None:
    player_id = player.get("/v1/me").json()["id"]
    operator.post(
        "/v1/cashier/deposits",
        {"player_id": player_id, "amount": 500, "currency": "USD"},
        key="deposit-2",
    )
    before = available(player)
    reused = operator.post(
        "/v1/cashier/deposits",
        {"player_id": player_id, "amount": 900, "currency": "USD"},
        key="deposit-2",
    )
    assert reused.status_code == 422
    assert reused.json()["code"] == "idempotency_key_reused"
    assert available(player) == before


def test_a_key_reused_on_another_path_is_refused(operator: Caller, player: Caller) -> None:
    player_id = player.get("/v1/me").json()["id"]
    body = {"player_id": player_id, "amount": 100, "currency": "USD"}
    operator.post("/v1/cashier/deposits", body, key="cash-3")
    reused = operator.post("/v1/cashier/withdrawals", body, key="cash-3")
    assert reused.json()["code"] == "idempotency_key_reused"


def test_keys_are_scoped_to_the_caller(operator: Caller) -> None:
    first, _ = new_player(operator, deposit=10_000)
    second, _ = new_player(operator, deposit=10_000)
    table_id = first.get("/v1/tables").json()["items"][0]["id"]
    a = first.post("/v1/hands", {"table_id": table_id, "bet": 100}, key="same")
    b = second.post("/v1/hands", {"table_id": table_id, "bet": 100}, key="same")
    assert a.status_code == b.status_code == 201
    assert a.json()["id"] != b.json()["id"]


def test_a_missing_key_is_refused_before_anything_happens(operator: Caller) -> None:
    refused = operator.post("/v1/players", {"display_name": "x"}, key=None)
    assert refused.status_code == 400
    assert refused.json()["code"] == "idempotency_key_required"


def test_an_overlong_key_is_a_validation_error(operator: Caller) -> None:
    refused = operator.post("/v1/players", {}, key="k" * 256)
    assert refused.status_code == 422
    assert refused.json()["code"] == "validation_error"


def test_a_refusal_is_replayed_and_a_new_key_tries_again(operator: Caller) -> None:
    player, player_id = new_player(operator)
    table_id = player.get("/v1/tables").json()["items"][0]["id"]
    refused = player.post("/v1/hands", {"table_id": table_id, "bet": 100}, key="first-try")
    assert refused.json()["code"] == "insufficient_funds"
    operator.post(
        "/v1/cashier/deposits", {"player_id": player_id, "amount": 1_000, "currency": "USD"}
    )
    replayed = player.post("/v1/hands", {"table_id": table_id, "bet": 100}, key="first-try")
    assert replayed.status_code == 422
    assert replayed.json() == refused.json()
    assert replayed.headers["Idempotent-Replayed"] == "true"
    assert replayed.headers["content-type"].startswith("application/problem+json")
    assert available(player) == 1_000
    fresh = player.post("/v1/hands", {"table_id": table_id, "bet": 100}, key="second-try")
    assert fresh.status_code == 201


def test_a_key_still_in_flight_in_this_process_is_refused(
    operator: Caller, settings: Settings
) -> None:
    runner: Idempotency = operator.client.app.state.idempotency
    caller = f"token:{_token_id(settings, operator.token)}"
    with runner.in_flight(caller, "busy-key"):
        refused = operator.post("/v1/players", {}, key="busy-key")
    assert refused.status_code == 409
    assert refused.json()["code"] == "idempotency_in_flight"
    assert operator.post("/v1/players", {}, key="busy-key").status_code == 201


def test_a_key_in_flight_in_another_process_is_refused_on_postgresql(
    operator: Caller, settings: Settings
) -> None:
    """Another worker's transaction holding the key's advisory lock: the key is in flight."""
    database = Database.connect(settings.database_url)
    if not database.is_postgresql:
        database.dispose()
        pytest.skip("SQLite serialises writers across processes: the second request waits")
    caller = f"token:{_token_id(settings, operator.token)}"
    try:
        with database.transaction() as session:
            session.execute(
                text("SELECT pg_advisory_xact_lock(:key)"),
                {"key": advisory_lock_key(caller, "busy-key")},
            )
            refused = operator.post("/v1/players", {}, key="busy-key")
    finally:
        database.dispose()
    assert refused.status_code == 409
    assert refused.json()["code"] == "idempotency_in_flight"


def test_a_players_command_in_flight_in_another_process_is_refused_at_once_and_moves_nothing(
    database_url: str,
) -> None:
    """A deposit takes the key's advisory lock and then the player's row lock in one statement
    on PostgreSQL. Another worker holding both (the first request, still running): the retry
    is refused as in flight instead of waiting for the row, which here would end in the lock
    timeout's 503; the player's money is untouched."""
    if not database_url.startswith("postgresql"):
        pytest.skip("SQLite serialises writers across processes: the second request waits")
    settings = Settings(database_url=database_url, database_timeout_seconds=2)
    with TestClient(app=create_app(settings)) as client:
        operator = Caller(client, issue_test_token(settings, Role.OPERATOR))
        _, player_id = new_player(operator, deposit=500)
        caller = f"token:{_token_id(settings, operator.token)}"
        deposit = {"player_id": player_id, "amount": 100, "currency": "USD"}
        holder = Database.connect(database_url)
        try:
            with holder.transaction() as session:
                session.execute(
                    text("SELECT pg_advisory_xact_lock(:key)"),
                    {"key": advisory_lock_key(caller, "busy-deposit")},
                )
                session.execute(
                    text("SELECT id FROM players WHERE id = :id FOR UPDATE"), {"id": player_id}
                )
                refused = operator.post("/v1/cashier/deposits", deposit, key="busy-deposit")
        finally:
            holder.dispose()
        assert refused.status_code == 409
        assert refused.json()["code"] == "idempotency_in_flight"
        accepted = operator.post("/v1/cashier/deposits", deposit, key="busy-deposit")
        assert accepted.status_code == 201 and accepted.json()["balance_after"] == 600


@pytest.mark.parametrize("database_url", ["postgresql"], indirect=True)
@pytest.mark.parametrize(
    "statement",
    [
        LOCK_KEY,
        LOCK_KEY_AND_PLAYER,
        lock_key_player_and_read("ledger_posting_locks(:chain, 1, :wallet, :cashier)"),
    ],
    ids=["a command", "a player's command", "a player's command with its read"],
)
def test_a_keys_record_committed_while_its_lock_was_awaited_is_read_in_the_locks_statement(
    engine: Engine, statement: Sql
) -> None:
    """The key's record is read in the statement that takes the key's lock. That statement
    may begin before the lock's previous holder commits the record; it still reads it,
    because the function that reads it (migration `0010_key_record_after_lock`) takes a
    snapshot of its own once the lock is held. (A plain subquery there reads NULL.) The
    service only tries the lock; here the statement waits for it instead, which holds it in
    that window, and is otherwise the service's own."""
    trying, waiting_instead = (
        Sql.of(clause).postgresql for clause in (TAKING_THE_KEYS_LOCK, _WAITING_FOR_THE_KEYS_LOCK)
    )
    waiting = statement.postgresql.replace(trying, waiting_instead)
    assert waiting != statement.postgresql
    lock = advisory_lock_key("token:1", "retried")
    with ThreadPoolExecutor(max_workers=1) as pool:
        with engine.begin() as holder:
            holder.execute(text("SELECT pg_advisory_xact_lock(:lock)"), {"lock": lock})
            retry = pool.submit(_record_once_locked, engine, waiting, lock)
            until_a_backend_waits_for_a_lock(engine, "the retry")
            holder.execute(_FIRST_ANSWER)
        record = retry.result(timeout=10)
    assert record is not None and json.loads(record) == ["fingerprint", 201, {"id": 7}]


_FIRST_ANSWER = text(
    """
    INSERT INTO idempotency_records
        (caller, "key", request_hash, response_status, response_body, created_at)
    VALUES ('token:1', 'retried', 'fingerprint', 201, '{"id": 7}', now())
    """
)
# OFFSET 0 keeps the planner from flattening the subquery into a constant `got`, which would
# fold the statement's `CASE WHEN got` guards away.
_WAITING_FOR_THE_KEYS_LOCK = (
    "FROM (SELECT true AS got FROM pg_advisory_xact_lock(:lock) OFFSET 0) AS l"
)


def _record_once_locked(engine: Engine, waiting: str, lock: int) -> str | None:
    parameters = {"lock": lock, "caller": "token:1", "key": "retried", "player_id": 1}
    with engine.begin() as retry:
        accounts = {"chain": 1, "wallet": "wallet:1:USD", "cashier": "cashier:USD"}
        row = retry.exec_driver_sql(waiting, parameters | accounts).one()
    record: str | None = row._mapping["record"]
    return record


def _token_id(settings: Settings, token: str) -> int:
    database = Database.connect(settings.database_url)
    try:
        with database.reading() as session:
            return authenticate(session, f"Bearer {token}").token_id
    finally:
        database.dispose()
