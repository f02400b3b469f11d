"""Free War games through the real app, on both databases: dealt, played a turn a request,
read with their log, revealed at the end, replayed by an auditor, and no money moved."""

import hashlib
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import text
from sqlalchemy.exc import DBAPIError

from api.cli import main
from ledger.database import make_engine
from tests.api.conftest import Caller, available, new_player
from tests.audit.support import use_database


def _deal(player: Caller, **body: Any) -> dict[str, Any]:
    response = player.post("/v1/war-games", body)
    assert response.status_code == 201, response.text
    game: dict[str, Any] = response.json()
    return game


def _turn(player: Caller, game_id: int, **body: Any) -> dict[str, Any]:
    response = player.post(f"/v1/war-games/{game_id}/turns", body)
    assert response.status_code == 201, response.text
    result: dict[str, Any] = response.json()
    return result


def _play_out(player: Caller, game_id: int) -> dict[str, Any]:
    while True:
        result = _turn(player, game_id)
        if result["game"]["status"] == "finished":
            return result


def test_a_new_game_shows_its_commitment_and_hides_the_seed_and_the_cards(
    player: Caller,
) -> None:
    game = _deal(player, variant="classic")
    assert len(game["server_seed_hash"]) == 64 and game["server_seed"] is None
    assert [seat["draw"] for seat in game["seats"]] == [26, 26]
    assert [seat["policy"] for seat in game["seats"]] == ["human", "top"]
    assert "state" not in game and game["status"] == "in_progress"


def test_a_turn_answers_the_cards_played_and_the_new_state(player: Caller) -> None:
    game = _deal(player, variant="classic")
    result = _turn(player, game["game_id"])
    record = result["turn"]["record"]
    assert record["turn"] == 1 and {play["seat"] for play in record["plays"]} == {0, 1}
    assert sum(s["draw"] + s["won"] for s in result["game"]["seats"]) == 52


def test_a_finished_game_reveals_its_server_seed_matching_the_commitment(
    player: Caller,
) -> None:
    game = _deal(player, variant="classic", options={"max_turns": 20})
    final = _play_out(player, game["game_id"])["game"]
    assert final["end"]["reason"] in {"winner", "draw", "cycle", "cap"}
    assert (
        hashlib.sha256(bytes.fromhex(final["server_seed"])).hexdigest() == game["server_seed_hash"]
    )


def test_a_finished_game_refuses_another_turn_with_409(player: Caller) -> None:
    game = _deal(player, variant="classic", options={"max_turns": 2})
    _play_out(player, game["game_id"])
    response = player.post(f"/v1/war-games/{game['game_id']}/turns", {})
    assert response.status_code == 409 and response.json()["code"] == "war_game_over"


def test_the_online_game_takes_each_human_choice_and_sort(player: Caller) -> None:
    game = _deal(
        player,
        variant="online",
        seats=[{"policy": "human"}, {"policy": "human"}, {"policy": "top"}, {"policy": "random"}],
    )
    result = _turn(
        player, game["game_id"], choices={"0": "bottom", "1": "random"}, sort="low_to_high"
    )
    assert result["turn"]["input"] == {
        "choices": {"0": "bottom", "1": "random"},
        "sort": "low_to_high",
    }
    assert result["turn"]["record"]["choices"] == ["bottom", "random", "top", "random"]


def test_a_choice_for_a_seat_that_is_not_human_is_refused_and_plays_nothing(
    player: Caller,
) -> None:
    game = _deal(player, variant="classic")
    response = player.post(f"/v1/war-games/{game['game_id']}/turns", {"choices": {"1": "top"}})
    assert response.status_code == 422 and response.json()["code"] == "validation_error"
    assert player.get(f"/v1/war-games/{game['game_id']}").json()["turn"] == 0


def test_an_unknown_variant_or_option_is_refused_with_422(player: Caller) -> None:
    for body in (
        {"variant": "snap"},
        {"options": {"jokers": 2}},
        {"players": 3, "variant": "tod_und_leben"},
    ):
        response = player.post("/v1/war-games", body)
        assert response.status_code == 422 and response.json()["code"] == "validation_error"


def test_a_retried_turn_is_played_once(player: Caller) -> None:
    game = _deal(player, variant="classic")
    first = player.post(f"/v1/war-games/{game['game_id']}/turns", {}, key="turn-1")
    again = player.post(f"/v1/war-games/{game['game_id']}/turns", {}, key="turn-1")
    assert first.json() == again.json()
    assert player.get(f"/v1/war-games/{game['game_id']}").json()["turn"] == 1


def test_another_players_game_is_not_found(player: Caller, operator: Caller) -> None:
    game = _deal(player, variant="classic")
    other, _ = new_player(operator)
    assert other.get(f"/v1/war-games/{game['game_id']}").status_code == 404
    assert other.post(f"/v1/war-games/{game['game_id']}/turns", {}).status_code == 404


def test_free_play_moves_no_money(operator: Caller) -> None:
    player, _ = new_player(operator, deposit=5_000)
    game = _deal(player, variant="classic", options={"max_turns": 10})
    _play_out(player, game["game_id"])
    assert available(player) == 5_000


def test_an_auditor_replays_a_game_and_finds_every_turn_matching(
    player: Caller, auditor: Caller
) -> None:
    game = _deal(player, variant="steal", options={"max_turns": 30})
    _play_out(player, game["game_id"])
    audit = auditor.get(f"/v1/audit/war-games/{game['game_id']}").json()
    assert audit["matches"] and audit["server_seed_hash_matches"] and audit["turns"] >= 1


def test_a_player_may_not_audit(player: Caller) -> None:
    game = _deal(player, variant="classic")
    assert player.get(f"/v1/audit/war-games/{game['game_id']}").status_code == 403


def test_the_published_game_verifies_with_the_command_line(player: Caller, tmp_path: Path) -> None:
    game = _deal(player, variant="online", players=2, options={"max_turns": 25})
    _play_out(player, game["game_id"])
    document = player.get(f"/v1/war-games/{game['game_id']}").json()
    path = tmp_path / "game.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    verified = subprocess.run(
        [sys.executable, "-m", "api.cli", "war", "verify", "--game", str(path)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert verified.returncode == 0, verified.stdout + verified.stderr
    assert "every turn matches" in verified.stdout


def test_the_database_refuses_to_change_or_delete_a_played_turn(
    player: Caller, database_url: str
) -> None:
    game = _deal(player, variant="classic")
    _turn(player, game["game_id"])
    engine = make_engine(database_url)
    try:
        for statement in (
            "UPDATE war_game_turns SET record = input",
            "DELETE FROM war_game_turns",
        ):
            with pytest.raises(DBAPIError), engine.begin() as connection:
                connection.execute(text(statement))
    finally:
        engine.dispose()


def _audit_command(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], url: str
) -> tuple[int, dict[str, Any]]:
    use_database(monkeypatch, url)
    status = main(["war", "audit", "--json"])
    report: dict[str, Any] = json.loads(capsys.readouterr().out)
    return status, report


def test_war_audit_replays_every_stored_game(
    player: Caller,
    database_url: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    for variant in ("classic", "online"):
        game = _deal(player, variant=variant, options={"max_turns": 15})
        _play_out(player, game["game_id"])
    status, report = _audit_command(monkeypatch, capsys, database_url)
    assert status == 0 and report["games"] == 2 and report["failed"] == []


def test_war_audit_names_a_game_whose_stored_turn_was_altered(
    player: Caller,
    database_url: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    game = _deal(player, variant="classic")
    for _ in range(3):
        _turn(player, game["game_id"])
    engine = make_engine(database_url)
    try:
        with engine.begin() as connection:
            if engine.dialect.name == "sqlite":
                connection.execute(text("DROP TRIGGER war_game_turns_no_update"))
            else:
                connection.execute(text("ALTER TABLE war_game_turns DISABLE TRIGGER USER"))
            record = connection.execute(
                text("SELECT record FROM war_game_turns WHERE turn = 2")
            ).scalar_one()
            altered = json.loads(record) if isinstance(record, str) else dict(record)
            altered["winner"] = 1 - altered["winner"]
            connection.execute(
                text("UPDATE war_game_turns SET record = :record WHERE turn = 2"),
                {"record": json.dumps(altered)},
            )
    finally:
        engine.dispose()
    status, report = _audit_command(monkeypatch, capsys, database_url)
    assert status == 1
    assert report["failed"] == [{"game_id": game["game_id"], "first_difference": 2}]


def test_a_game_and_each_turn_record_the_token_that_asked(
    player: Caller, database_url: str
) -> None:
    game = _deal(player, variant="classic")
    _turn(player, game["game_id"])
    engine = make_engine(database_url)
    try:
        with engine.connect() as connection:
            created = connection.execute(
                text("SELECT created_by_token FROM war_games WHERE id = :id"),
                {"id": game["game_id"]},
            ).scalar_one()
            played = connection.execute(
                text("SELECT played_by_token FROM war_game_turns WHERE game_id = :id"),
                {"id": game["game_id"]},
            ).scalar_one()
    finally:
        engine.dispose()
    assert created is not None and played == created
