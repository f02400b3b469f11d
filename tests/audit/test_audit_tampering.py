"""Tampering with protections dropped: edits the ledger's hash chain alone cannot see are
caught by what the ledger witnesses of each hand (player, table, times, decision), by the
table's rules, by nonce continuity, and the audit endpoint answers them with a verdict."""

import json
from datetime import timedelta
from typing import Any

import pytest
from sqlalchemy import Engine, func, select, update

from api.cli import main
from api.db.database import Database
from api.db.models import CasinoTable, SeedPair, hands_table
from api.db.snapshot import read_snapshot
from api.domain.audit.batch import audit_hands
from api.domain.audit.integrity import audit_ledger
from api.domain.tables import service as tables
from ledger.schema import transactions
from tests.audit.support import (
    Caller,
    execute,
    hand_transaction_ids,
    new_player,
    rechain_ledger,
    use_database,
)
from tests.ledger.tampering import drop_ledger_triggers


def _cli_audit(
    monkeypatch: pytest.MonkeyPatch, url: str, capsys: pytest.CaptureFixture[str]
) -> tuple[int, Any]:
    use_database(monkeypatch, url)
    status = main(["audit", "--json"])
    return status, json.loads(capsys.readouterr().out)


def _differences(document: dict[str, Any], hand_id: int) -> dict[str, dict[str, Any]]:
    found = {m["hand_id"]: m for m in document["hands"]["mismatches"]}
    assert hand_id in found, document["hands"]["mismatches"]
    return {d["field"]: d for d in found[hand_id]["differences"]}


def _set(engine: Engine, hand_id: int, **values: object) -> None:
    """UPDATE one hand row through Core, so JSON and timestamps bind on either database."""
    with engine.begin() as connection:
        connection.execute(update(hands_table).where(hands_table.c.id == hand_id).values(values))


def _hand_count(engine: Engine) -> int:
    with engine.connect() as connection:
        return int(connection.execute(select(func.count()).select_from(hands_table)).scalar_one())


def _hand_column(engine: Engine, hand_id: int, column: str) -> Any:
    with engine.connect() as connection:
        return connection.execute(
            select(hands_table.c[column]).where(hands_table.c.id == hand_id)
        ).scalar_one()


# A deleted hand, the ledger re-chained -----------------------------------------------------


def test_a_hand_deleted_with_its_ledger_and_the_chain_rehashed_leaves_a_nonce_gap(
    database: Database,
    database_url: str,
    played: dict[str, Any],
    auditor: Caller,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    hand = played["settled"][4]
    pair_id = _hand_column(database.engine, hand.id, "seed_pair_id")
    txn_ids = hand_transaction_ids(database.engine, hand.id)
    drop_ledger_triggers(database.engine)
    for txn_id in txn_ids:
        execute(database.engine, "DELETE FROM ledger_entries WHERE transaction_id = :id", id=txn_id)
        execute(database.engine, "DELETE FROM ledger_transactions WHERE id = :id", id=txn_id)
    execute(database.engine, "DELETE FROM hands WHERE id = :id", id=hand.id)
    rechain_ledger(database.engine)

    status, document = _cli_audit(monkeypatch, database_url, capsys)
    assert status == 1
    ledger = document["ledger"]
    # Everything the ledger can check about itself passes: the deletion is well hidden ...
    for section in ("hash_chain", "trial_balance", "stored_balances", "hand_references"):
        assert ledger[section]["ok"] is True, (section, ledger[section])
    assert document["hands"]["mismatched"] == 0
    # ... except the hole it left in the seed pair's nonces.
    nonces = ledger["nonce_continuity"]
    assert nonces["ok"] is False
    assert nonces["seed_pairs_checked"] >= 1
    (problem,) = nonces["problems"]
    assert (problem["table"], problem["row_id"], problem["code"]) == (
        "seed_pairs",
        pair_id,
        "nonce_gap",
    )
    assert f"seed pair {pair_id}: no hand has nonce {hand.fairness.nonce} " in problem["detail"]
    body = auditor.get("/v1/audit/ledger").json()
    assert body["ok"] is False
    assert body["nonce_continuity"]["problems"][0]["row_id"] == pair_id


def test_nonce_continuity_names_each_gap_of_a_seed_pair(
    database: Database, played: dict[str, Any]
) -> None:
    first, second = played["settled"][3], played["settled"][4]
    pair_id = _hand_column(database.engine, first.id, "seed_pair_id")
    execute(database.engine, "DELETE FROM hands WHERE id IN (:a, :b)", a=first.id, b=second.id)
    execute(
        database.engine,
        "UPDATE seed_pairs SET next_nonce = next_nonce + 2 WHERE id = :id",
        id=pair_id,
    )
    with read_snapshot(database.engine) as connection:
        next_nonce = connection.execute(
            select(SeedPair.next_nonce).where(SeedPair.id == pair_id)
        ).scalar_one()
        audit = audit_ledger(connection)
    problems = audit.nonce_continuity.problems
    assert [(p.table, p.row_id, p.code) for p in problems] == [
        ("seed_pairs", pair_id, "nonce_gap"),
        ("seed_pairs", pair_id, "nonce_gap"),
    ]
    assert f"no hand has nonces {first.fairness.nonce}-{second.fairness.nonce} " in (
        problems[0].detail
    )
    assert f"no hand has nonces {next_nonce - 2}-{next_nonce - 1} " in problems[1].detail
    assert not audit.ok


# Record edits the ledger witnesses ---------------------------------------------------------


def test_a_hand_moved_to_another_player_is_caught_by_the_ledger_metadata(
    database: Database,
    database_url: str,
    played: dict[str, Any],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    hand = played["settled"][6]
    other = new_player(database)
    _set(database.engine, hand.id, player_id=other)
    status, document = _cli_audit(monkeypatch, database_url, capsys)
    assert status == 1
    found = _differences(document, hand.id)["player_id"]
    assert (found["recorded"], found["derived"]) == (other, played["player"])
    assert found["transaction_ids"] == hand_transaction_ids(database.engine, hand.id)


def test_a_hand_moved_to_another_table_is_caught_by_the_ledger_metadata(
    database: Database,
    database_url: str,
    played: dict[str, Any],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    hand = played["settled"][6]
    with database.transaction() as session:  # the same rules: only the table differs
        twin = tables.create_table(session, "twin", {}, "USD").id
    _set(database.engine, hand.id, table_id=twin)
    status, document = _cli_audit(monkeypatch, database_url, capsys)
    assert status == 1
    differences = _differences(document, hand.id)
    assert set(differences) == {"table_id"}
    assert (differences["table_id"]["recorded"], differences["table_id"]["derived"]) == (
        twin,
        hand.table_id,
    )


def test_changed_recorded_rules_are_caught_field_by_field_against_the_table(
    database: Database,
    database_url: str,
    played: dict[str, Any],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    hand = next(h for h in played["settled"] if h.tie_bet == 0)
    rules = dict(_hand_column(database.engine, hand.id, "rules"))
    rules.update(max_bet=rules["max_bet"] * 10, min_bet=rules["min_bet"] * 2)
    _set(database.engine, hand.id, rules=rules)
    status, document = _cli_audit(monkeypatch, database_url, capsys)
    assert status == 1
    differences = _differences(document, hand.id)
    assert set(differences) == {"rules.max_bet", "rules.min_bet", "engine.rules_hash"}
    assert differences["rules.max_bet"]["recorded"] == rules["max_bet"]
    assert differences["rules.max_bet"]["derived"] == rules["max_bet"] // 10


@pytest.mark.parametrize("recorded", [[], "rules", 42])
def test_recorded_rules_that_are_not_an_object_are_named_and_the_audit_goes_on(
    database: Database,
    database_url: str,
    played: dict[str, Any],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    recorded: object,
) -> None:
    hand = played["surrendered"]
    _set(database.engine, hand.id, rules=recorded)
    status, document = _cli_audit(monkeypatch, database_url, capsys)
    assert status == 1
    differences = _differences(document, hand.id)
    assert "rules" in differences
    assert "recorded rules are not valid JSON rules" in differences["replay"]["derived"]
    assert "engine.rules_hash" not in differences
    assert document["hands"]["hands_checked"] == _hand_count(database.engine)


@pytest.mark.parametrize(
    ("values", "field"),
    [
        ({"engine_version": "0.9.9"}, "engine.version"),
        ({"rules_hash": "0" * 64}, "engine.rules_hash"),
        ({"engine_version": None}, "engine.version"),
    ],
)
def test_a_forged_engine_version_or_rules_hash_is_caught(
    database: Database,
    database_url: str,
    played: dict[str, Any],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    values: dict[str, object],
    field: str,
) -> None:
    hand = played["surrendered"]
    _set(database.engine, hand.id, **values)
    status, document = _cli_audit(monkeypatch, database_url, capsys)
    assert status == 1
    assert set(_differences(document, hand.id)) == {field}


def test_a_wager_the_table_refuses_is_caught_on_bet(
    database: Database,
    database_url: str,
    played: dict[str, Any],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    hand = played["surrendered"]
    with database.reading() as session:
        table = session.get_one(CasinoTable, hand.table_id)
        max_bet = int(table.rules["max_bet"])
    _set(database.engine, hand.id, bet=max_bet * 2)
    status, document = _cli_audit(monkeypatch, database_url, capsys)
    assert status == 1
    differences = _differences(document, hand.id)
    assert differences["bet"]["recorded"] == max_bet * 2
    assert "bet must be from" in differences["bet"]["derived"]


@pytest.mark.parametrize("column", ["created_at", "settled_at"])
def test_a_moved_time_is_caught_against_its_ledger_posting(
    column: str,
    database: Database,
    database_url: str,
    played: dict[str, Any],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    hand = played["settled"][8]
    kind = "stake" if column == "created_at" else "settlement"
    moment = _hand_column(database.engine, hand.id, column)
    _set(database.engine, hand.id, **{column: moment + timedelta(seconds=30)})  # tolerated
    with read_snapshot(database.engine) as connection:
        assert audit_hands(connection).ok
    _set(database.engine, hand.id, **{column: moment - timedelta(hours=2)})
    status, document = _cli_audit(monkeypatch, database_url, capsys)
    assert status == 1
    differences = _differences(document, hand.id)
    assert set(differences) == {column}
    assert differences[column]["transaction_ids"] == hand_transaction_ids(
        database.engine, hand.id, kind
    )


def _settlement_metadata(engine: Engine, hand_id: int) -> dict[str, Any]:
    with engine.connect() as connection:
        return dict(
            connection.execute(
                select(transactions.c["metadata"]).where(
                    transactions.c.reference == f"hand:{hand_id}",
                    transactions.c.kind == "settlement",
                )
            ).scalar_one()
        )


def test_a_flipped_decided_by_is_caught_by_the_settlement_metadata(
    database: Database,
    database_url: str,
    played: dict[str, Any],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    hand = played["war"]
    metadata = _settlement_metadata(database.engine, hand.id)
    if "decided_by" not in metadata:
        pytest.skip("hands.py does not yet record the decision in the settlement metadata")
    assert (metadata["decision"], metadata["decided_by"]) == ("war", "player")
    _set(database.engine, hand.id, decided_by="timeout")
    status, document = _cli_audit(monkeypatch, database_url, capsys)
    assert status == 1
    differences = _differences(document, hand.id)
    assert set(differences) == {"decided_by"}
    assert (differences["decided_by"]["recorded"], differences["decided_by"]["derived"]) == (
        "timeout",
        "player",
    )
    assert differences["decided_by"]["transaction_ids"] == hand_transaction_ids(
        database.engine, hand.id, "settlement"
    )


def test_a_flipped_decision_is_named_by_the_settlement_metadata(
    database: Database,
    database_url: str,
    played: dict[str, Any],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    hand = played["surrendered"]
    if "decision" not in _settlement_metadata(database.engine, hand.id):
        pytest.skip("hands.py does not yet record the decision in the settlement metadata")
    _set(database.engine, hand.id, decision="war")
    status, document = _cli_audit(monkeypatch, database_url, capsys)
    assert status == 1
    found = _differences(document, hand.id)["decision"]
    assert (found["recorded"], found["derived"]) == ("war", "surrender")
    assert found["transaction_ids"] == hand_transaction_ids(database.engine, hand.id, "settlement")


def test_a_forged_balance_after_a_tie_with_a_deposit_in_its_window_is_caught(
    database: Database,
    database_url: str,
    played: dict[str, Any],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    hand = played["war"]  # 7,000 deposited while it awaited the decision
    execute(
        database.engine,
        "UPDATE hands SET balance_after = balance_after + 100 WHERE id = :id",
        id=hand.id,
    )
    status, document = _cli_audit(monkeypatch, database_url, capsys)
    assert status == 1
    found = _differences(document, hand.id)["balance_after - balance_before"]
    assert found["derived"] == hand.net + 7_000
    assert found["recorded"] == hand.net + 7_100


# The audit endpoint on rows that no longer fit the hand schema ----------------------------


@pytest.mark.parametrize(
    ("column", "value"),
    [("status", "bogus"), ("outcome", "jackpot"), ("decision", "fold")],
)
def test_hand_audit_answers_a_mismatch_not_a_server_error_on_a_row_outside_the_schema(
    column: str,
    value: str,
    database: Database,
    played: dict[str, Any],
    auditor: Caller,
) -> None:
    hand = played["war"]
    _set(database.engine, hand.id, **{column: value})
    response = auditor.get(f"/v1/audit/hands/{hand.id}")
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["hand"] is None
    assert body["verdict"] == "mismatch"
    named = {d["field"]: d for d in body["differences"]}
    assert column in named, body["differences"]
    assert named[column]["recorded"] == value
    assert body["seeds"]["nonce"] == hand.fairness.nonce
    assert (body["recall"] is None) == (column == "decision")  # the recall has no status
    assert [t["kind"] for t in body["ledger_transactions"]] == ["stake", "raise", "settlement"]
