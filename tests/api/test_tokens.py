"""Tokens with a life cycle: listed without their secret, revoked (by staff, or by their
holder), expiring; a revoked or expired token is refused, by every worker within a second."""

import json
import time
from datetime import UTC, datetime, timedelta

import httpx
import pytest
from freezegun import freeze_time
from litestar.testing import TestClient

from api.app import create_app
from api.cli import main
from api.db.database import Database
from api.domain.tokens.service import Role, issue_token
from api.settings import Settings
from tests.api.conftest import Caller, LiveServer, issue_test_token, new_player
from tests.audit.support import use_database


def _token_ids(caller: Caller, **filters: object) -> list[int]:
    return [t["id"] for t in caller.get("/v1/tokens", **filters).json()["items"]]


def test_staff_list_tokens_without_their_secrets(operator: Caller, auditor: Caller) -> None:
    new_player(operator)
    listed = auditor.get("/v1/tokens").json()["items"]
    assert {t["role"] for t in listed} == {"operator", "auditor", "player"}
    for token in listed:
        assert set(token) == {
            "id",
            "role",
            "name",
            "player_id",
            "issued_by",
            "created_at",
            "expires_at",
            "revoked_at",
            "last_used_at",
        }
    assert "cw_" not in str(listed)


def test_the_list_filters_by_role_player_and_liveness(operator: Caller) -> None:
    _, player_id = new_player(operator)
    (player_token,) = _token_ids(operator, player_id=player_id)
    assert player_token in _token_ids(operator, role="player", active=True)
    operator.post(f"/v1/tokens/{player_token}/revoke")
    assert player_token in _token_ids(operator, active=False)
    assert player_token not in _token_ids(operator, active=True)


def test_a_player_token_issued_by_the_back_office_names_its_issuer(operator: Caller) -> None:
    _, player_id = new_player(operator)
    operator.post(f"/v1/players/{player_id}/tokens")
    issued = operator.get("/v1/tokens", player_id=player_id).json()["items"]
    operator_token = operator.get("/v1/tokens", role="operator").json()["items"][0]["id"]
    assert [t["issued_by"] for t in issued] == [operator_token, operator_token]
    events = operator.get("/v1/events", type="token_issued", player_id=player_id).json()
    assert [e["actor"]["token_id"] for e in events["items"]] == [operator_token] * 2


def test_a_revoked_token_is_refused_with_token_revoked(operator: Caller) -> None:
    player, player_id = new_player(operator)
    assert player.get("/v1/me").status_code == 200
    (token_id,) = _token_ids(operator, player_id=player_id)
    revoked = operator.post(f"/v1/tokens/{token_id}/revoke")
    assert revoked.status_code == 200 and revoked.json()["revoked_at"] is not None
    time.sleep(1.05)  # the longest any worker remembers a token
    refused = player.get("/v1/me")
    assert refused.status_code == 401 and refused.json()["code"] == "token_revoked"


def test_any_caller_may_revoke_its_own_token(operator: Caller) -> None:
    player, _ = new_player(operator)
    own = player.post("/v1/me/token/revoke")
    assert own.status_code == 200 and own.json()["role"] == "player"
    time.sleep(1.05)
    assert player.get("/v1/me").json()["code"] == "token_revoked"


def test_players_and_auditors_cannot_revoke_others_tokens(
    operator: Caller, auditor: Caller
) -> None:
    player, player_id = new_player(operator)
    (token_id,) = _token_ids(operator, player_id=player_id)
    assert auditor.post(f"/v1/tokens/{token_id}/revoke").status_code == 403
    assert player.post(f"/v1/tokens/{token_id}/revoke").status_code == 403
    assert player.get("/v1/tokens").status_code == 403


def test_an_expired_token_is_refused_with_token_expired(
    operator: Caller, settings: Settings
) -> None:
    database = Database.connect(settings.database_url)
    try:
        with database.transaction() as session:
            token = issue_token(session, Role.AUDITOR, name="short", ttl=timedelta(hours=1))
    finally:
        database.dispose()
    auditor = Caller(operator.client, token)
    assert auditor.get("/v1/tokens").status_code == 200
    with freeze_time(datetime.now(UTC) + timedelta(hours=1, seconds=5)):
        refused = auditor.get("/v1/tokens")
    assert refused.status_code == 401 and refused.json()["code"] == "token_expired"


def test_a_used_token_notes_when(operator: Caller) -> None:
    player, player_id = new_player(operator)
    player.get("/v1/me")
    (token,) = operator.get("/v1/tokens", player_id=player_id).json()["items"]
    assert token["last_used_at"] is not None


def test_every_worker_refuses_a_revoked_token_within_a_second(live_server: LiveServer) -> None:
    operator = {"Authorization": f"Bearer {live_server.token(Role.OPERATOR)}"}
    base = live_server.base_url
    created = httpx.post(
        f"{base}/v1/players",
        json={"display_name": "Ada"},
        headers={**operator, "Idempotency-Key": "revoke-workers"},
    ).json()
    player = {"Authorization": f"Bearer {created['token']}"}
    for _ in range(20):  # both workers now remember the token
        assert httpx.get(f"{base}/v1/me", headers=player).status_code == 200
    (token,) = httpx.get(
        f"{base}/v1/tokens", params={"player_id": created["id"]}, headers=operator
    ).json()["items"]
    httpx.post(
        f"{base}/v1/tokens/{token['id']}/revoke",
        headers={**operator, "Idempotency-Key": "revoke-it"},
    )
    time.sleep(1.05)
    statuses = {httpx.get(f"{base}/v1/me", headers=player).status_code for _ in range(20)}
    assert statuses == {401}


def test_the_command_line_creates_lists_and_revokes_tokens_with_expiry(
    database_url: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    use_database(monkeypatch, database_url, staff_token_ttl_seconds="3600")
    assert main(["token", "create", "--role", "auditor", "--name", "desk"]) == 0
    assert capsys.readouterr().out.startswith("cw_")
    assert main(["token", "create", "--role", "operator", "--ttl", "60"]) == 0
    capsys.readouterr()
    assert main(["token", "list", "--json"]) == 0
    tokens = json.loads(capsys.readouterr().out)["items"]
    lifetimes = [
        datetime.fromisoformat(t["expires_at"]) - datetime.fromisoformat(t["created_at"])
        for t in tokens
    ]
    assert [round(life.total_seconds()) for life in lifetimes] == [3600, 60]
    assert main(["token", "revoke", str(tokens[0]["id"]), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["revoked_at"] is not None
    assert main(["token", "list", "--no-active", "--json"]) == 0
    assert [t["id"] for t in json.loads(capsys.readouterr().out)["items"]] == [tokens[0]["id"]]


def test_player_tokens_expire_when_a_setting_says_so(settings: Settings) -> None:
    with_ttl = settings.model_copy(update={"player_token_ttl_seconds": 3600})
    with TestClient(app=create_app(with_ttl)) as client:
        operator = Caller(client, issue_test_token(with_ttl, Role.OPERATOR))
        player, player_id = new_player(operator)
        (token,) = operator.get("/v1/tokens", player_id=player_id).json()["items"]
        expires = datetime.fromisoformat(token["expires_at"])
        created = datetime.fromisoformat(token["created_at"])
        assert expires - created == timedelta(hours=1)
        assert player.get("/v1/me").status_code == 200
        with freeze_time(expires + timedelta(seconds=5)):
            refused = player.get("/v1/me")
        assert refused.status_code == 401 and refused.json()["code"] == "token_expired"


def test_player_tokens_never_expire_by_default(operator: Caller) -> None:
    _, player_id = new_player(operator)
    (token,) = operator.get("/v1/tokens", player_id=player_id).json()["items"]
    assert token["expires_at"] is None


def test_a_revocation_is_an_event_naming_who_revoked_what(
    operator: Caller, auditor: Caller
) -> None:
    _, player_id = new_player(operator)
    (token,) = operator.get("/v1/tokens", player_id=player_id).json()["items"]
    token_id = token["id"]
    operator.post(f"/v1/tokens/{token_id}/revoke")
    (event,) = auditor.get("/v1/events", type="token_revoked").json()["items"]
    operator_id = _token_ids(operator, role="operator")[0]
    assert event["actor"]["token_id"] == operator_id
    assert event["player_id"] == player_id
    assert event["subject"] == {
        "token_id": token_id,
        "role": "player",
        "name": token["name"],
    }
