"""Hands awaiting a decision: the report, and the house resolving abandoned ties."""

import json
from datetime import UTC, datetime, timedelta

import pytest
from freezegun import freeze_time

from api.cli import main
from api.db.database import Database
from api.db.models import HandRecord
from api.db.snapshot import read_snapshot
from api.domain.audit.batch import audit_hands
from api.domain.cashier import service as cashier
from api.domain.hands.unfinished import resolve_abandoned, unfinished_hands
from ledger.posting import balance
from tests.audit.support import (
    Caller,
    new_player,
    play_tie,
    token,
    use_database,
)

DEALT = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)
TIMEOUT = 3600


def _tie(database: Database, deposit: int = 1_000_000, bet: int = 1000) -> tuple[int, int]:
    player = new_player(database, deposit)
    with freeze_time(DEALT):
        hand = play_tie(database, player, bet=bet)
    return player, hand.id


def test_a_tie_is_resolved_only_once_the_timeout_has_passed(database: Database) -> None:
    _, hand_id = _tie(database)
    with freeze_time(DEALT + timedelta(seconds=TIMEOUT)):
        assert resolve_abandoned(database, TIMEOUT, "surrender") == []
        with database.reading() as session:
            (waiting,) = unfinished_hands(session, TIMEOUT)
        assert waiting.id == hand_id and not waiting.overdue
    with freeze_time(DEALT + timedelta(seconds=TIMEOUT + 1)):
        (resolved,) = resolve_abandoned(database, TIMEOUT, "surrender")
    assert (resolved.hand_id, resolved.resolution, resolved.outcome) == (
        hand_id,
        "surrender",
        "surrender",
    )
    assert resolved.net == -500
    with database.reading() as session:
        assert unfinished_hands(session, TIMEOUT) == []
        record = session.get_one(HandRecord, hand_id)
        assert (record.decision, record.decided_by) == ("surrender", "timeout")
    with read_snapshot(database.engine) as connection:
        assert audit_hands(connection).ok


def test_configured_war_raises_when_the_wallet_covers_it(database: Database) -> None:
    _tie(database)
    with freeze_time(DEALT + timedelta(days=2)):
        (resolved,) = resolve_abandoned(database, TIMEOUT, "war")
    assert resolved.resolution == "war"
    assert resolved.outcome in ("war_win", "war_tie", "war_loss")


def test_configured_war_falls_back_to_surrender_when_the_wallet_cannot_cover_the_raise(
    database: Database,
) -> None:
    player, _ = _tie(database)
    with database.transaction() as session:
        available = balance(session, f"wallet:{player}:USD")
        cashier.withdraw(session, player, available - 999, "USD", "USD")  # 999 < the raise
    with freeze_time(DEALT + timedelta(days=2)):
        (resolved,) = resolve_abandoned(database, TIMEOUT, "war")
    assert resolved.resolution == "surrender"
    assert "cannot cover" in resolved.reason


def test_cli_lists_and_resolves_abandoned_hands(
    database: Database,
    database_url: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    _, hand_id = _tie(database)
    use_database(monkeypatch, database_url, decision_timeout_seconds=str(TIMEOUT))
    assert main(["hands", "unfinished", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert [(h["id"], h["overdue"]) for h in listed["items"]] == [(hand_id, True)]
    assert main(["hands", "resolve-abandoned", "--json"]) == 0
    resolved = json.loads(capsys.readouterr().out)
    assert resolved["action"] == "surrender"
    assert [(r["hand_id"], r["resolution"]) for r in resolved["resolved"]] == [
        (hand_id, "surrender")
    ]
    assert main(["hands", "unfinished"]) == 0
    assert "0 hands await a decision" in capsys.readouterr().out


def test_operators_see_unfinished_hands_over_http(
    database: Database, operator: Caller, auditor: Caller
) -> None:
    _, hand_id = _tie(database)
    response = operator.get("/v1/reports/unfinished")
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["abandoned_tie_action"] == "surrender"
    (item,) = body["items"]
    assert item["id"] == hand_id
    assert item["overdue"] is True  # dealt in the (frozen) past, a day's timeout ago
    assert auditor.get("/v1/reports/unfinished").status_code == 403
    player = Caller(operator.client, token(database, "player", item["player_id"]))
    assert player.get("/v1/reports/unfinished").status_code == 403
