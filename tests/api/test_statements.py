"""A player's money history and statements, from the ledger, through the real app on both
databases; the operator's daily player account summary."""

from datetime import UTC, datetime
from typing import Any

import pytest
from freezegun import freeze_time

from tests.api.conftest import Caller, available, new_player, play_until, standard_table_id


def _transactions(caller: Caller, path: str = "/v1/me/transactions", **params: Any) -> list[Any]:
    items: list[Any] = []
    cursor = None
    while True:
        query = dict(params, **({"cursor": cursor} if cursor else {}))
        page = caller.get(path, **query).json()
        items += page["items"]
        cursor = page["next_cursor"]
        if cursor is None:
            return items


def test_the_history_lists_every_wallet_move_with_the_balance_after_it(operator: Caller) -> None:
    player, player_id = new_player(operator, deposit=10_000)
    table_id = standard_table_id(player)
    play_until(player, table_id, "settled")
    operator.post(
        "/v1/cashier/withdrawals", {"player_id": player_id, "amount": 500, "currency": "USD"}
    )
    history = _transactions(player, limit=2)
    assert history[0]["kind"] == "deposit" and history[0]["amount"] == 10_000
    assert history[-1]["kind"] == "withdrawal" and history[-1]["amount"] == -500
    running = 0
    for item in history:
        running += item["amount"]
        assert item["balance_after"] == running
    assert running == available(player)
    assert all(
        (item["hand_id"] is None) == (item["kind"] in {"deposit", "withdrawal"}) for item in history
    )


def test_a_lost_hands_settlement_moves_nothing_through_the_wallet(operator: Caller) -> None:
    player, _ = new_player(operator, deposit=10_000)
    table_id = standard_table_id(player)
    while True:
        hand = play_until(player, table_id, "settled")
        if hand["outcome"] == "dealer_win":
            break
    settlements = [
        t for t in _transactions(player) if t["hand_id"] == hand["id"] and t["kind"] == "settlement"
    ]
    assert [t["amount"] for t in settlements] == [0]


@pytest.mark.parametrize(
    ("parameter", "value", "refusal"),
    [
        ("to", "2026-01-01T00:00:00", "with its offset"),
        ("to", "0001-01-01T00:01:00+03:03", "out of range"),
        ("from", "9999-12-31T23:00:00-05:00", "out of range"),
    ],
)
def test_a_time_without_its_offset_or_outside_the_utc_calendar_is_refused_by_name(
    operator: Caller, parameter: str, value: str, refusal: str
) -> None:
    player, _ = new_player(operator, deposit=1_000)
    refused = player.get("/v1/me/transactions", **{parameter: value})
    assert refused.status_code == 422
    problem = refused.json()
    assert problem["code"] == "validation_error"
    assert problem["errors"][0]["field"] == parameter and refusal in problem["detail"]


def test_the_history_filters_by_time(operator: Caller) -> None:
    with freeze_time(datetime(2026, 3, 1, 12, tzinfo=UTC)):
        player, player_id = new_player(operator, deposit=1_000)
    with freeze_time(datetime(2026, 3, 2, 12, tzinfo=UTC)):
        operator.post(
            "/v1/cashier/deposits", {"player_id": player_id, "amount": 700, "currency": "USD"}
        )
    later = _transactions(player, **{"from": "2026-03-02T00:00:00Z"})
    assert [t["amount"] for t in later] == [700] and later[0]["balance_after"] == 1_700
    earlier = _transactions(player, **{"to": "2026-03-02T00:00:00Z"})
    assert [t["amount"] for t in earlier] == [1_000]


def test_staff_read_a_players_history_and_a_player_reads_only_their_own(
    operator: Caller, auditor: Caller
) -> None:
    _, player_id = new_player(operator, deposit=1_000)
    other, _ = new_player(operator)
    for staff in (operator, auditor):
        assert [
            t["amount"] for t in _transactions(staff, f"/v1/players/{player_id}/transactions")
        ] == [1_000]
    assert other.get(f"/v1/players/{player_id}/transactions").status_code == 403
    assert operator.get("/v1/players/999999/transactions").status_code == 404


def test_a_statement_balances_to_the_ledger_across_gaming_days(operator: Caller) -> None:
    with freeze_time(datetime(2026, 4, 1, 23, 30, tzinfo=UTC)):
        player, player_id = new_player(operator, deposit=10_000)
        play_until(player, standard_table_id(player), "settled")
    with freeze_time(datetime(2026, 4, 2, 0, 30, tzinfo=UTC)):
        hand = play_until(player, standard_table_id(player), "awaiting_decision")
        player.post(f"/v1/hands/{hand['id']}/decision", {"action": "war"})
        operator.post(
            "/v1/cashier/withdrawals", {"player_id": player_id, "amount": 100, "currency": "USD"}
        )
    first = _statement(player, "2026-04-01", "2026-04-01")
    second = _statement(player, "2026-04-02", "2026-04-02")
    both = _statement(player, "2026-04-01", "2026-04-02")
    for line in (first, second, both):
        assert (
            line["opening_balance"]
            + line["deposits"]
            - line["withdrawals"]
            - line["staked"]
            + line["returned"]
            == line["closing_balance"]
        )
    assert first["opening_balance"] == 0 and first["deposits"] == 10_000
    assert second["opening_balance"] == first["closing_balance"]
    assert both["closing_balance"] == second["closing_balance"] == available(player)
    assert second["staked"] >= 2 * hand["bet"] and second["withdrawals"] == 100
    assert (first["hands"] >= 1, second["hands"] >= 1, both["hands"]) == (
        True,
        True,
        first["hands"] + second["hands"],
    )


def test_staff_read_a_players_statement_as_the_player_does(
    operator: Caller, auditor: Caller
) -> None:
    with freeze_time(datetime(2026, 4, 3, 12, tzinfo=UTC)):
        player, player_id = new_player(operator, deposit=5_000)
        play_until(player, standard_table_id(player), "settled")
    window = {"from": "2026-04-03", "to": "2026-04-03"}
    own = player.get("/v1/me/statement", **window).json()
    assert own["currencies"][0]["hands"] >= 1 and own["currencies"][0]["deposits"] == 5_000
    for staff in (operator, auditor):
        assert staff.get(f"/v1/players/{player_id}/statement", **window).json() == own
    other, _ = new_player(operator)
    assert other.get(f"/v1/players/{player_id}/statement", **window).status_code == 403


def _statement(caller: Caller, first: str, last: str) -> dict[str, Any]:
    body = caller.get("/v1/me/statement", **{"from": first, "to": last}).json()
    (line,) = body["currencies"]
    assert (body["from"], body["to"]) == (first, last)
    return line  # type: ignore[no-any-return]


def test_a_reversed_statement_range_is_refused(player: Caller) -> None:
    response = player.get("/v1/me/statement", **{"from": "2026-04-02", "to": "2026-04-01"})
    assert response.status_code == 422 and response.json()["code"] == "validation_error"


def test_the_daily_player_account_summary_has_a_row_per_player_and_currency(
    operator: Caller,
) -> None:
    with freeze_time(datetime(2026, 5, 5, 12, tzinfo=UTC)):
        _, first = new_player(operator, deposit=300)
        _, second = new_player(operator, deposit=700)
    body = operator.get("/v1/reports/player-accounts", day="2026-05-05").json()
    rows = {row["player_id"]: row for row in body["rows"]}
    assert rows[first]["deposits"] == 300 and rows[second]["closing_balance"] == 700
    next_day = operator.get("/v1/reports/player-accounts", day="2026-05-06").json()
    assert {r["player_id"]: r["opening_balance"] for r in next_day["rows"]}[second] == 700


def test_the_summary_as_csv_names_its_day_and_says_when_there_are_no_accounts(
    operator: Caller,
) -> None:
    response = operator.client.get(
        "/v1/reports/player-accounts",
        params={"day": "2026-05-05"},
        headers={**operator.headers, "Accept": "text/csv"},
    )
    assert response.headers["content-type"].startswith("text/csv")
    lines = response.text.splitlines()
    assert "gaming day 2026-05-05" in lines[0]
    assert lines[1].startswith("currency,opening_balance")
    assert lines[-1] == "no player accounts"
