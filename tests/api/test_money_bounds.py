"""No balance leaves the signed 64-bit range on either database: a movement that would is
refused with 422 amount_too_large and moves nothing, and the audit reports an out-of-range
balance stored behind the service's back instead of crashing on it."""

import json

import pytest
from sqlalchemy import text

from api.cli import main
from ledger.database import make_engine
from tests.api.conftest import Caller, available, new_player, play_until, standard_table_id
from tests.audit.support import use_database

INT64_MAX = 2**63 - 1


def _set_balance(database_url: str, code: str, balance: int | float) -> None:
    engine = make_engine(database_url)
    try:
        with engine.begin() as connection:
            connection.execute(
                text("UPDATE ledger_accounts SET balance = :balance WHERE code = :code"),
                {"balance": balance, "code": code},
            )
    finally:
        engine.dispose()


def test_a_deposit_that_would_overflow_the_wallet_is_refused_and_moves_nothing(
    operator: Caller, database_url: str
) -> None:
    player, player_id = new_player(operator, deposit=100)
    _set_balance(database_url, f"wallet:{player_id}:USD", INT64_MAX - 50)
    refused = operator.post(
        "/v1/cashier/deposits", {"player_id": player_id, "amount": 100, "currency": "USD"}
    )
    assert refused.status_code == 422 and refused.json()["code"] == "amount_too_large"
    assert available(player) == INT64_MAX - 50
    accepted = operator.post(
        "/v1/cashier/deposits", {"player_id": player_id, "amount": 50, "currency": "USD"}
    )
    assert accepted.status_code == 201 and available(player) == INT64_MAX


def test_a_hand_whose_win_would_overflow_the_wallet_is_refused(
    operator: Caller, database_url: str
) -> None:
    player, player_id = new_player(operator, deposit=10_000)
    table_id = standard_table_id(player)
    for _ in range(50):
        _set_balance(database_url, f"wallet:{player_id}:USD", INT64_MAX - 50)
        response = player.post("/v1/hands", {"table_id": table_id, "bet": 1_000})
        if response.status_code == 422:
            assert response.json()["code"] == "amount_too_large"
            assert available(player) == INT64_MAX - 50
            break
        hand = response.json()
        assert hand["outcome"] != "player_win"  # a win would overflow: refused, not paid
        if hand["status"] == "awaiting_decision":
            player.post(f"/v1/hands/{hand['id']}/decision", {"action": "surrender"})
    else:
        pytest.fail("no winning deal in 50 hands")
    assert available(player) <= INT64_MAX


def test_the_audit_reports_a_balance_stored_out_of_range_instead_of_crashing(
    operator: Caller,
    database_url: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    player, player_id = new_player(operator, deposit=10_000)
    play_until(player, standard_table_id(player), "settled")
    stored: int | float = 1e19 if database_url.startswith("sqlite") else INT64_MAX
    _set_balance(database_url, f"wallet:{player_id}:USD", stored)
    use_database(monkeypatch, database_url)
    assert main(["audit", "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["ledger"]["ok"] is False


def test_the_ledger_audit_route_reports_a_balance_stored_out_of_range(
    operator: Caller, auditor: Caller, database_url: str
) -> None:
    _, player_id = new_player(operator, deposit=10_000)
    stored: int | float = 1e19 if database_url.startswith("sqlite") else INT64_MAX
    _set_balance(database_url, f"wallet:{player_id}:USD", stored)
    response = auditor.get("/v1/audit/ledger")
    assert response.status_code == 200, response.text
    (problem,) = response.json()["stored_balances"]["problems"]
    assert problem["code"] == "balance_mismatch"
    assert problem["detail"].startswith(f"wallet:{player_id}:USD: stored balance {stored}")
