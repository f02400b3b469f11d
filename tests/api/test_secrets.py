"""Secrets never rest in plain text and never reach an error: tokens and unrevealed seeds."""

import logging
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest
from sqlalchemy import text
from sqlalchemy.exc import IntegrityError

from api.db.database import Database
from api.domain.tokens.service import Role
from api.http.problems import EXCEPTION_HANDLERS
from api.settings import Settings
from ledger.database import make_engine
from tests.api.conftest import Caller, LiveServer, new_key


def _every_stored_text(database_url: str) -> str:
    database = Database.connect(database_url)
    try:
        with database.reading() as session:
            rows = [
                *session.execute(text("SELECT response_body FROM idempotency_records")),
                *session.execute(text("SELECT token_hash FROM api_tokens")),
            ]
    finally:
        database.dispose()
    return " ".join(str(value) for row in rows for value in row)


def test_a_players_token_is_stored_only_as_a_hash(operator: Caller, settings: Settings) -> None:
    token = operator.post("/v1/players", {"display_name": "Cy"}, key="cy").json()["token"]
    assert token not in _every_stored_text(settings.database_url)


def test_a_replayed_player_creation_cannot_show_the_token_again(operator: Caller) -> None:
    first = operator.post("/v1/players", {}, key="same-player").json()
    replay = operator.post("/v1/players", {}, key="same-player")
    assert replay.headers["Idempotent-Replayed"] == "true"
    assert replay.json() == {**first, "token": None}


def test_an_operator_issues_another_token_for_a_player(operator: Caller) -> None:
    created = operator.post("/v1/players", {"display_name": "Di"}).json()
    issued = operator.post(f"/v1/players/{created['id']}/tokens")
    assert issued.status_code == 201
    fresh = Caller(operator.client, issued.json()["token"])
    assert fresh.get("/v1/me").json()["id"] == created["id"]
    assert Caller(operator.client, created["token"]).get("/v1/me").status_code == 200


def test_an_unexpected_error_reaches_log_and_client_without_its_message(
    database_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    """A database error may quote the failing row (PostgreSQL does): its text goes nowhere."""
    secret = "f" * 64
    engine = make_engine(database_url)
    try:
        with engine.begin() as connection, pytest.raises(IntegrityError) as error:
            connection.execute(
                text("INSERT INTO players (id, display_name, created_at) VALUES (1, :name, NULL)"),
                {"name": secret},
            )
    finally:
        engine.dispose()
    with caplog.at_level(logging.ERROR):
        response = EXCEPTION_HANDLERS[Exception](None, error.value)  # type: ignore[arg-type]
    assert response.status_code == 500
    assert secret not in str(response.content)
    assert "IntegrityError" in caplog.text
    assert secret not in caplog.text


def test_control_characters_in_free_text_are_a_validation_error(operator: Caller) -> None:
    for body in ({"display_name": "a\u0000b"}, {"external_ref": "x\ny"}):
        refused = operator.post("/v1/players", body)
        assert refused.status_code == 422
        assert refused.json()["code"] == "validation_error"
    refused = operator.post("/v1/tables", {"name": "tab\tle"})
    assert refused.status_code == 422


def test_racing_duplicates_of_a_unique_reference_are_refused_not_crashed(
    live_server: LiveServer,
) -> None:
    token = live_server.token(Role.OPERATOR)

    def create(_: int) -> int:
        return httpx.post(
            f"{live_server.base_url}/v1/players",
            json={"external_ref": "crm-race"},
            headers={"Authorization": f"Bearer {token}", "Idempotency-Key": new_key()},
            timeout=60,
        ).status_code

    with ThreadPoolExecutor(max_workers=8) as pool:
        statuses = sorted(pool.map(create, range(8)))
    assert statuses == [201] + [422] * 7
