"""The hand-replay audit: clean data matches; every kind of tampering is caught and named."""

import json
from datetime import UTC, datetime
from typing import Any

import pytest
from freezegun import freeze_time

from api.cli import main
from api.db.database import Database
from api.db.snapshot import read_snapshot
from api.domain.audit.batch import audit_hands
from api.domain.audit.integrity import audit_ledger
from api.domain.audit.results import HeldByCurrency
from tests.audit.support import (
    Caller,
    execute,
    hand_transaction_ids,
    new_player,
    play_settled,
    stake_wallet_entry,
    token,
    use_database,
)
from tests.ledger.tampering import drop_ledger_triggers


def _cli_audit(
    monkeypatch: pytest.MonkeyPatch, url: str, capsys: pytest.CaptureFixture[str], *args: str
) -> tuple[int, Any]:
    use_database(monkeypatch, url)
    status = main(["audit", "--json", *args])
    return status, json.loads(capsys.readouterr().out)


def _ids(differences: list[dict[str, Any]]) -> set[str]:
    return {d["field"] for d in differences}


@pytest.mark.usefixtures("played")
def test_clean_period_replays_every_hand_and_matches(database: Database) -> None:
    with read_snapshot(database.engine) as connection:
        result = audit_hands(connection)
        ledger = audit_ledger(connection)
    assert result.ok, result.mismatches
    assert result.hands_checked >= 33
    assert result.awaiting_decision == 1
    assert ledger.ok, ledger
    held = ledger.held_for_unsettled_hands
    assert held.ok
    assert held.by_currency == (
        HeldByCurrency("USD", held=1000, unsettled_stakes=1000, unsettled_hands=1),
    )


@pytest.mark.usefixtures("played")
def test_cli_audit_exits_0_on_clean_data_and_prints_one_json_document(
    database_url: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    status, document = _cli_audit(monkeypatch, database_url, capsys)
    assert status == 0
    assert document["ok"] is True
    assert document["hands"]["mismatched"] == 0
    assert document["ledger"]["hash_chain"]["ok"] is True


@pytest.mark.usefixtures("played")
def test_cli_audit_summary_in_words(
    database_url: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    use_database(monkeypatch, database_url)
    assert main(["audit"]) == 0
    out = capsys.readouterr().out
    assert "audit: clean" in out
    assert "hash chain: ok" in out


def test_audit_range_selects_hands_by_gaming_day_of_creation(
    database: Database,
    database_url: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    player = new_player(database)
    with freeze_time(datetime(2026, 5, 1, 12, tzinfo=UTC)):
        play_settled(database, player)
    with freeze_time(datetime(2026, 5, 3, 12, tzinfo=UTC)):
        play_settled(database, player)
        play_settled(database, player)
    status, document = _cli_audit(
        monkeypatch, database_url, capsys, "--from", "2026-05-02", "--to", "2026-05-03"
    )
    assert status == 0
    assert document["hands"]["hands_checked"] == 2
    assert main(["audit", "--from", "2026-05-03", "--to", "2026-05-01"]) == 2


def test_auditor_gets_hand_seeds_replay_ledger_verdict_and_recall(
    auditor: Caller, played: dict[str, Any]
) -> None:
    war = played["war"]
    response = auditor.get(f"/v1/audit/hands/{war.id}")
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["verdict"] == "match"
    assert body["differences"] == []
    assert body["hand"]["id"] == war.id
    assert body["hand"]["fairness"]["server_seed"] == body["seeds"]["server_seed"]
    assert body["seeds"]["revealed_at"] is None  # unrevealed, yet shown to the auditor
    assert body["seeds"]["commitment_ok"] is True
    derived = body["derived"]
    assert derived["player_card"] == war.player_card
    assert war.war is not None
    assert derived["war"]["player_card"] == war.war.player_card
    assert derived["raise"] == war.bet
    assert len(derived["cards"]) == 2 + 3 + 2
    kinds = [t["kind"] for t in body["ledger_transactions"]]
    assert kinds == ["stake", "raise", "settlement"]
    assert all(len(t["hash"]) == 64 and t["entries"] for t in body["ledger_transactions"])
    recall = body["recall"]
    assert recall["decision"] == "war"
    assert recall["decided_by"] == "player"
    assert recall["first_deal"] == {"player_card": war.player_card, "dealer_card": war.dealer_card}
    assert recall["balance_after"] - recall["balance_before"] == war.net + 7_000
    assert recall["rules"]["decks"] == 6
    assert recall["ended_at"] is not None


def test_an_unsettled_hand_matches_with_only_its_stake(
    auditor: Caller, played: dict[str, Any]
) -> None:
    body = auditor.get(f"/v1/audit/hands/{played['open'].id}").json()
    assert body["verdict"] == "match"
    assert [t["kind"] for t in body["ledger_transactions"]] == ["stake"]
    assert body["derived"]["status"] == "awaiting_decision"


def test_hand_audit_is_for_auditors_only_and_404_for_unknown_hands(
    auditor: Caller, operator: Caller, database: Database, played: dict[str, Any]
) -> None:
    hand_id = played["war"].id
    assert operator.get(f"/v1/audit/hands/{hand_id}").status_code == 403
    player = Caller(auditor.client, token(database, "player", played["player"]))
    assert player.get(f"/v1/audit/hands/{hand_id}").status_code == 403
    assert operator.get("/v1/audit/ledger").status_code == 403
    missing = auditor.get("/v1/audit/hands/999999")
    assert missing.status_code == 404
    assert missing.json()["code"] == "not_found"


@pytest.mark.usefixtures("played")
def test_ledger_integrity_endpoint(auditor: Caller) -> None:
    body = auditor.get("/v1/audit/ledger").json()
    assert body["ok"] is True
    assert body["hash_chain"]["ok"] is True
    assert body["trial_balance"]["by_currency"] == {"USD": 0}
    assert body["stored_balances"]["ok"] is True
    assert body["held_for_unsettled_hands"]["by_currency"][0]["unsettled_hands"] == 1


# Tampering ---------------------------------------------------------------------------


def _mismatch(document: dict[str, Any], hand_id: int) -> set[str]:
    found = {m["hand_id"]: m for m in document["hands"]["mismatches"]}
    assert hand_id in found, document["hands"]["mismatches"]
    return _ids(found[hand_id]["differences"])


def test_a_changed_card_is_caught_and_the_hand_named(
    database: Database,
    database_url: str,
    played: dict[str, Any],
    auditor: Caller,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    hand = played["settled"][5]
    other = "2C" if hand.player_card != "2C" else "3C"
    execute(
        database.engine, "UPDATE hands SET player_card = :c WHERE id = :id", c=other, id=hand.id
    )
    status, document = _cli_audit(monkeypatch, database_url, capsys)
    assert status == 1
    assert "player_card" in _mismatch(document, hand.id)
    assert document["hands"]["mismatched"] == 1
    body = auditor.get(f"/v1/audit/hands/{hand.id}").json()
    assert body["verdict"] == "mismatch"
    assert {
        "field": "player_card",
        "recorded": other,
        "derived": hand.player_card,
        "transaction_ids": None,
    } in body["differences"]
    assert main(["audit"]) == 1
    assert f"MISMATCH hand {hand.id}: player_card" in capsys.readouterr().out


def test_a_changed_war_card_is_caught(
    database: Database,
    database_url: str,
    played: dict[str, Any],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    hand = played["war"]
    execute(database.engine, "UPDATE hands SET war_dealer_card = 'JK' WHERE id = :id", id=hand.id)
    status, document = _cli_audit(monkeypatch, database_url, capsys)
    assert status == 1
    assert _mismatch(document, hand.id) == {"war.dealer_card"}


def test_a_changed_amount_on_the_hand_record_is_caught(
    database: Database,
    database_url: str,
    played: dict[str, Any],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    hand = played["surrendered"]
    execute(
        database.engine,
        "UPDATE hands SET total_returned = total_returned + 500, net = net + 500 WHERE id = :id",
        id=hand.id,
    )
    status, document = _cli_audit(monkeypatch, database_url, capsys)
    assert status == 1
    # The balances still agree with the replayed net: only the record's amounts were forged.
    assert _mismatch(document, hand.id) == {"total_returned", "net"}
    assert document["ledger"]["ok"] is True  # the ledger itself is intact


def test_a_changed_ledger_entry_amount_is_caught_naming_hand_and_row(
    database: Database,
    database_url: str,
    played: dict[str, Any],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    hand = played["settled"][3]
    txn_id, entry_id = stake_wallet_entry(database.engine, hand.id)
    drop_ledger_triggers(database.engine)
    execute(
        database.engine,
        "UPDATE ledger_entries SET amount = amount + 100 WHERE id = :id",
        id=entry_id,
    )
    status, document = _cli_audit(monkeypatch, database_url, capsys)
    assert status == 1
    assert _mismatch(document, hand.id) == {"ledger.stake.entries"}
    chain = document["ledger"]["hash_chain"]
    assert chain["ok"] is False
    assert {(p["row_id"], p["code"]) for p in chain["problems"]} >= {(txn_id, "hash_mismatch")}
    trial = document["ledger"]["trial_balance"]
    assert (txn_id, "unbalanced") in {(p["row_id"], p["code"]) for p in trial["problems"]}


def test_a_deleted_ledger_transaction_is_caught(
    database: Database,
    database_url: str,
    played: dict[str, Any],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    hand = played["settled"][7]
    (txn_id,) = hand_transaction_ids(database.engine, hand.id, "settlement")
    drop_ledger_triggers(database.engine)
    execute(database.engine, "DELETE FROM ledger_entries WHERE transaction_id = :id", id=txn_id)
    execute(database.engine, "DELETE FROM ledger_transactions WHERE id = :id", id=txn_id)
    status, document = _cli_audit(monkeypatch, database_url, capsys)
    assert status == 1
    assert "ledger.settlement.count" in _mismatch(document, hand.id)
    codes = {p["code"] for p in document["ledger"]["hash_chain"]["problems"]}
    assert codes & {"seq_gap", "head_mismatch"}


def test_a_deleted_hand_row_is_caught_by_its_orphaned_ledger_rows(
    database: Database,
    database_url: str,
    played: dict[str, Any],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    hand = played["settled"][2]
    execute(database.engine, "DELETE FROM hands WHERE id = :id", id=hand.id)
    status, document = _cli_audit(monkeypatch, database_url, capsys)
    assert status == 1
    problems = document["ledger"]["hand_references"]["problems"]
    assert problems and all(f"'hand:{hand.id}'" in p["detail"] for p in problems)
    assert {p["row_id"] for p in problems} == set(hand_transaction_ids(database.engine, hand.id))
    assert main(["audit"]) == 1
    assert "unknown_hand" in capsys.readouterr().out


def test_a_deleted_unsettled_hand_leaves_money_held_for_nothing(
    database: Database,
    database_url: str,
    played: dict[str, Any],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    execute(database.engine, "DELETE FROM hands WHERE id = :id", id=played["open"].id)
    status, document = _cli_audit(monkeypatch, database_url, capsys)
    assert status == 1
    held = document["ledger"]["held_for_unsettled_hands"]
    assert held["ok"] is False
    assert held["by_currency"][0]["held"] == 1000
    assert held["by_currency"][0]["unsettled_stakes"] == 0
    assert held["problems"][0]["code"] == "held_mismatch"


def test_a_forged_decision_is_caught(
    database: Database,
    database_url: str,
    played: dict[str, Any],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    hand = next(h for h in played["settled"] if h.decision is None)
    execute(
        database.engine,
        "UPDATE hands SET decision = 'surrender', decided_by = 'player' WHERE id = :id",
        id=hand.id,
    )
    status, document = _cli_audit(monkeypatch, database_url, capsys)
    assert status == 1
    assert "decision" in _mismatch(document, hand.id)
