"""The significant-events log: who did what to whom, filterable, exported, hash-chained,
and any event altered or removed behind the database's back is named by the audit."""

import json
from typing import Any

import pytest
from freezegun import freeze_time
from sqlalchemy import select, text

from api.cli import main
from ledger.database import make_engine
from ledger.schema import LedgerTransaction
from tests.api.conftest import Caller, new_player, play_until, standard_table_id
from tests.audit.support import use_database


def _events(caller: Caller, **filters: object) -> list[dict[str, Any]]:
    response = caller.get("/v1/events", **filters)
    assert response.status_code == 200, response.text
    items: list[dict[str, Any]] = response.json()["items"]
    return items


def _operator_token_id(operator: Caller) -> int:
    return int(operator.get("/v1/tokens", role="operator").json()["items"][0]["id"])


def test_creating_a_player_records_who_created_it_and_the_token_issued(
    operator: Caller,
) -> None:
    _, player_id = new_player(operator)
    events = _events(operator, player_id=player_id)
    assert [e["type"] for e in events] == ["player_created", "token_issued"]
    actor = events[0]["actor"]
    assert (actor["token_id"], actor["role"]) == (_operator_token_id(operator), "operator")


def test_table_changes_and_seed_rotations_are_events_with_their_actor(
    operator: Caller,
) -> None:
    table = operator.post("/v1/tables", {"name": "evening"}).json()
    operator.post(f"/v1/tables/{table['id']}/close")
    operator.post(f"/v1/tables/{table['id']}/open")
    player, player_id = new_player(operator)
    player.post("/v1/me/seeds/rotate", {"client_seed": "mine"})
    types = [e["type"] for e in _events(operator)]
    assert [t for t in types if t.startswith("table_")] == [
        "table_created",
        "table_closed",
        "table_opened",
    ]
    (rotation,) = _events(operator, type="seeds_rotated")
    assert rotation["player_id"] == player_id and rotation["actor"]["role"] == "player"
    assert rotation["details"]["client_seed"] == "mine"
    assert "server_seed" not in json.dumps(rotation).replace("server_seed_hash", "")


def test_limits_and_exclusions_are_events(operator: Caller) -> None:
    player, player_id = new_player(operator)
    player.post("/v1/me/limits", {"limits": [{"kind": "max_bet", "amount": 500}]})
    player.post("/v1/me/exclusion", {"until": None})
    types = [e["type"] for e in _events(operator, player_id=player_id)]
    assert "limit_changed" in types and "exclusion_set" in types


def test_events_filter_by_type_player_and_token(operator: Caller, auditor: Caller) -> None:
    _, first = new_player(operator)
    new_player(operator)
    assert {e["player_id"] for e in _events(auditor, player_id=first)} == {first}
    assert {e["type"] for e in _events(auditor, type="player_created")} == {"player_created"}
    by_operator = _events(auditor, token_id=_operator_token_id(operator))
    assert len(by_operator) == 4


@pytest.mark.parametrize(
    ("parameter", "value"),
    [
        ("from", "2026-01-01T00:00:00"),
        ("to", "0001-01-01T00:01:00+03:03"),
        ("from", "9999-12-31T23:00:00-05:00"),
    ],
)
def test_a_time_without_its_offset_or_outside_the_utc_calendar_is_refused_by_name(
    auditor: Caller, parameter: str, value: str
) -> None:
    refused = auditor.get("/v1/events", **{parameter: value})
    assert refused.status_code == 422
    assert refused.json()["errors"][0]["field"] == parameter


def test_players_may_not_read_the_events(operator: Caller) -> None:
    player, _ = new_player(operator)
    assert player.get("/v1/events").status_code == 403


def test_a_hand_records_the_tokens_that_placed_and_decided_it(
    operator: Caller, auditor: Caller
) -> None:
    player, player_id = new_player(operator, deposit=10_000)
    hand = play_until(player, standard_table_id(player), "awaiting_decision")
    player.post(f"/v1/hands/{hand['id']}/decision", {"action": "war"})
    actors = auditor.get(f"/v1/audit/hands/{hand['id']}").json()["actors"]
    (token,) = operator.get("/v1/tokens", player_id=player_id).json()["items"]
    assert actors["placed"]["token_id"] == actors["decided"]["token_id"] == token["id"]
    assert actors["placed"]["issued_by"] == _operator_token_id(operator)


def _cli(monkeypatch: pytest.MonkeyPatch, url: str, *argv: str) -> int:
    use_database(monkeypatch, url)
    return main(list(argv))


def test_the_audit_verifies_the_events_chain_and_records_its_run(
    operator: Caller,
    database_url: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    new_player(operator)
    assert _cli(monkeypatch, database_url, "audit", "--json") == 0
    report = json.loads(capsys.readouterr().out)
    assert report["events"] == {"events": 2, "ok": True, "problems": []}
    assert [e["type"] for e in _events(operator)][-1] == "audit_run"


def _without_triggers(database_url: str, *statements: str) -> None:
    engine = make_engine(database_url)
    try:
        with engine.begin() as connection:
            if engine.dialect.name == "sqlite":
                connection.execute(text("DROP TRIGGER events_no_update"))
                connection.execute(text("DROP TRIGGER events_no_delete"))
            else:
                connection.execute(text("ALTER TABLE events DISABLE TRIGGER USER"))
            for statement in statements:
                connection.execute(text(statement))
    finally:
        engine.dispose()


@pytest.mark.parametrize(
    ("statement", "seq", "problem"),
    [
        ("UPDATE events SET type = 'table_opened' WHERE seq = 2", 2, "altered"),
        ("DELETE FROM events WHERE seq = 2", 2, "missing"),
        ("DELETE FROM events WHERE seq = 4", 4, "the head is at event 4"),
    ],
    ids=["altered", "removed", "removed-at-the-end"],
)
def test_the_audit_names_an_event_altered_or_removed(
    operator: Caller,
    database_url: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    statement: str,
    seq: int,
    problem: str,
) -> None:
    new_player(operator)
    new_player(operator)
    _without_triggers(database_url, statement)
    assert _cli(monkeypatch, database_url, "audit", "--json") == 1
    problems = json.loads(capsys.readouterr().out)["events"]["problems"]
    assert any(p["seq"] == seq and problem in p["problem"] for p in problems), problems


def test_the_database_refuses_to_change_an_event(operator: Caller, database_url: str) -> None:
    new_player(operator)
    engine = make_engine(database_url)
    try:
        for statement in ("UPDATE events SET type = 'x'", "DELETE FROM events"):
            with pytest.raises(Exception, match="append-only"), engine.begin() as connection:
                connection.execute(text(statement))
    finally:
        engine.dispose()


def test_events_export_as_json_lines_and_csv(
    operator: Caller,
    database_url: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    new_player(operator)
    today = operator.get("/v1/events").json()["items"][0]["at"][:10]
    args = ["events", "export", "--from", today, "--to", today]
    assert _cli(monkeypatch, database_url, *args) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [e["type"] for e in lines] == ["player_created", "token_issued"]
    assert _cli(monkeypatch, database_url, *args, "--format", "csv") == 0
    csv_lines = capsys.readouterr().out.splitlines()
    assert csv_lines[0] == "id,seq,at,type,actor,player_id,subject,details,hash"
    assert len(csv_lines) == 3


def test_failed_authentications_past_the_limit_get_429_and_one_event_a_burst(
    operator: Caller, database_url: str
) -> None:
    intruder = Caller(operator.client, "cw_guessing")
    statuses = [intruder.get("/v1/me").status_code for _ in range(30)]
    assert statuses[:20] == [401] * 20
    assert set(statuses[20:]) == {429}
    throttled = operator.client.get("/v1/me", headers={"Authorization": "Bearer cw_more"})
    assert throttled.status_code == 429
    assert int(throttled.headers["retry-after"]) > 0
    assert throttled.json()["code"] == "too_many_requests"
    # Read from the database: the test client shares the intruder's address, now throttled.
    engine = make_engine(database_url)
    try:
        with engine.connect() as connection:
            bursts = connection.execute(
                text("SELECT player_id FROM events WHERE type = 'authentication_throttled'")
            ).all()
    finally:
        engine.dispose()
    assert len(bursts) == 1


def test_events_page_with_a_cursor_oldest_first(operator: Caller, auditor: Caller) -> None:
    for _ in range(3):
        new_player(operator)
    everything = [e["id"] for e in _events(auditor, limit=100)]
    first = auditor.get("/v1/events", limit=2).json()
    rest = auditor.get("/v1/events", limit=100, cursor=first["next_cursor"]).json()
    assert [e["id"] for e in first["items"] + rest["items"]] == everything == sorted(everything)
    assert rest["next_cursor"] is None


def test_events_filter_by_time_from_inclusive_to_exclusive(
    operator: Caller, auditor: Caller
) -> None:
    with freeze_time("2026-03-01T10:00:00Z"):
        new_player(operator)
    with freeze_time("2026-03-02T10:00:00Z"):
        _, later = new_player(operator)
    window = _events(auditor, **{"from": "2026-03-02T10:00:00Z", "to": "2026-03-03T00:00:00Z"})
    assert {e["player_id"] for e in window} == {later}
    assert _events(auditor, **{"from": "2026-03-01T00:00:00Z", "to": "2026-03-02T10:00:00Z"})
    assert all(e["at"] < "2026-03-02T10" for e in _events(auditor, to="2026-03-02T10:00:00Z"))


def test_money_moves_carry_the_asking_token_in_their_hashed_metadata(
    operator: Caller, database_url: str
) -> None:
    player, player_id = new_player(operator, deposit=10_000)
    play_until(player, standard_table_id(player), "settled")
    (player_token,) = operator.get("/v1/tokens", player_id=player_id).json()["items"]
    engine = make_engine(database_url)
    try:
        with engine.connect() as connection:
            rows = connection.execute(select(LedgerTransaction.kind, LedgerTransaction.meta)).all()
    finally:
        engine.dispose()
    actors: dict[str, set[int | None]] = {}
    for kind, meta in rows:
        actors.setdefault(kind, set()).add(meta.get("actor_token_id"))
    assert actors["deposit"] == {_operator_token_id(operator)}
    assert actors["stake"] == actors["settlement"] == {player_token["id"]}
