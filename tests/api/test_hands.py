"""Hands through HTTP: dealing, deciding, money moved, history."""

from typing import Any

import pytest

from api.db.database import Database
from api.settings import Settings
from casino.rules import TableRules
from casino.version import ENGINE_VERSION, rules_hash
from ledger import chart
from ledger.chains import chain_for
from ledger.posting import transactions_for_reference
from tests.api.conftest import Caller, available, new_player, play_until, standard_table_id


def test_a_settled_hand_moves_exactly_its_net_through_the_wallet(player: Caller) -> None:
    hand = play_until(player, standard_table_id(player), "settled")
    assert hand["outcome"] in {"player_win", "dealer_win"}
    assert hand["net"] == hand["total_returned"] - hand["total_staked"]
    assert available(player) == hand["balance_after"] == hand["balance_before"] + hand["net"]


def test_a_tie_waits_with_its_stakes_held(player: Caller) -> None:
    hand = play_until(player, standard_table_id(player), "awaiting_decision")
    assert hand["outcome"] is None and hand["net"] is None and hand["balance_after"] is None
    assert hand["player_card"][0] == hand["dealer_card"][0]
    balances = player.get("/v1/me").json()["balances"][0]
    assert balances["held"] == hand["bet"] + hand["tie_bet"]


def test_war_raises_the_bet_and_settles_the_hand(player: Caller) -> None:
    hand = play_until(player, standard_table_id(player), "awaiting_decision")
    decided = player.post(f"/v1/hands/{hand['id']}/decision", {"action": "war"})
    assert decided.status_code == 200, decided.text
    body = decided.json()
    assert body["status"] == "settled" and body["decision"] == "war"
    assert body["raise"] == body["bet"] and body["total_staked"] == 2 * body["bet"]
    assert body["outcome"] in {"war_win", "war_tie", "war_loss"}
    assert len(body["war"]["burned"]) == body["rules"]["burn_cards"]
    assert available(player) == body["balance_after"] == body["balance_before"] + body["net"]


def test_surrender_returns_half_the_bet(player: Caller) -> None:
    hand = play_until(player, standard_table_id(player), "awaiting_decision")
    body = player.post(f"/v1/hands/{hand['id']}/decision", {"action": "surrender"}).json()
    assert body["outcome"] == "surrender" and body["war"] is None and body["raise"] == 0
    assert body["net"] == -body["bet"] // 2
    assert body["decided_by"] == "player"


def test_a_decision_on_a_settled_hand_is_refused(player: Caller) -> None:
    hand = play_until(player, standard_table_id(player), "settled")
    refused = player.post(f"/v1/hands/{hand['id']}/decision", {"action": "war"})
    assert refused.status_code == 409
    assert refused.json()["code"] == "hand_not_awaiting_decision"


def test_surrender_is_refused_where_the_table_does_not_allow_it(
    operator: Caller, player: Caller
) -> None:
    table = operator.post("/v1/tables", {"name": "no-surrender", "surrender_allowed": False})
    hand = play_until(player, table.json()["id"], "awaiting_decision")
    refused = player.post(f"/v1/hands/{hand['id']}/decision", {"action": "surrender"})
    assert refused.status_code == 422 and refused.json()["code"] == "surrender_not_allowed"
    assert player.get(f"/v1/hands/{hand['id']}").json()["status"] == "awaiting_decision"


def test_a_player_with_a_hand_awaiting_decision_cannot_open_another(player: Caller) -> None:
    table_id = standard_table_id(player)
    play_until(player, table_id, "awaiting_decision")
    before = available(player)
    refused = player.post("/v1/hands", {"table_id": table_id, "bet": 100})
    assert refused.status_code == 409 and refused.json()["code"] == "unfinished_hand"
    assert available(player) == before


def test_war_the_wallet_cannot_cover_is_refused_and_the_hand_still_waits(
    operator: Caller,
) -> None:
    player, _ = new_player(operator, deposit=2_000)
    table_id = standard_table_id(player)
    for _ in range(300):
        hand = player.post("/v1/hands", {"table_id": table_id, "bet": 100}).json()
        if hand["status"] == "awaiting_decision":
            break
    else:
        pytest.fail("no tie in 300 hands")
    # Stake the rest of the wallet elsewhere is impossible (one hand at a time), so
    # withdraw it: what is left cannot cover the raise.
    left = available(player)
    if left:
        operator.post(
            "/v1/cashier/withdrawals",
            {"player_id": hand["player_id"], "amount": left, "currency": "USD"},
        )
    refused = player.post(f"/v1/hands/{hand['id']}/decision", {"action": "war"})
    assert refused.status_code == 422 and refused.json()["code"] == "insufficient_funds"
    assert player.get(f"/v1/hands/{hand['id']}").json()["status"] == "awaiting_decision"
    settled = player.post(f"/v1/hands/{hand['id']}/decision", {"action": "surrender"})
    assert settled.status_code == 200


@pytest.mark.parametrize(
    ("wager", "code"),
    [
        ({"bet": 50}, "bet_out_of_range"),
        ({"bet": 200_000}, "bet_out_of_range"),
        ({"bet": 150}, "bet_not_multiple_of_unit"),
        ({"bet": 100, "tie_bet": 20_000}, "bet_out_of_range"),
        ({"bet": 100, "tie_bet": 150}, "bet_not_multiple_of_unit"),
        ({"bet": 100, "currency": "EUR"}, "currency_mismatch"),
    ],
)
def test_a_wager_the_table_does_not_accept_is_refused_without_moving_money(
    player: Caller, wager: dict[str, object], code: str
) -> None:
    before = available(player)
    refused = player.post("/v1/hands", {"table_id": standard_table_id(player), **wager})
    assert refused.status_code == 422 and refused.json()["code"] == code
    assert available(player) == before
    assert player.get("/v1/hands").json()["items"] == []


def test_a_bet_beyond_the_wallet_is_insufficient_funds(operator: Caller) -> None:
    player, _ = new_player(operator, deposit=500)
    refused = player.post("/v1/hands", {"table_id": standard_table_id(player), "bet": 1000})
    assert refused.status_code == 422 and refused.json()["code"] == "insufficient_funds"
    assert player.get("/v1/me/seeds").json()["next_nonce"] == 0


def test_a_closed_table_deals_no_hands(operator: Caller, player: Caller) -> None:
    table_id = standard_table_id(player)
    assert operator.post(f"/v1/tables/{table_id}/close").json()["open"] is False
    refused = player.post("/v1/hands", {"table_id": table_id, "bet": 100})
    assert refused.status_code == 409 and refused.json()["code"] == "table_closed"
    assert operator.post(f"/v1/tables/{table_id}/open").json()["open"] is True
    assert player.post("/v1/hands", {"table_id": table_id, "bet": 100}).status_code == 201


def test_an_unknown_table_is_not_found(player: Caller) -> None:
    refused = player.post("/v1/hands", {"table_id": 9999, "bet": 100})
    assert refused.status_code == 404 and refused.json()["code"] == "not_found"


def test_history_is_newest_first_and_paginated(player: Caller) -> None:
    table_id = standard_table_id(player)
    for _ in range(5):
        play_until(player, table_id, "settled")
    first = player.get("/v1/hands", limit=2).json()
    second = player.get("/v1/hands", limit=2, cursor=first["next_cursor"]).json()
    ids = [h["id"] for h in first["items"] + second["items"]]
    assert ids == sorted(ids, reverse=True) and len(set(ids)) == 4


def test_history_filters_by_status_and_table(player: Caller) -> None:
    table_id = standard_table_id(player)
    play_until(player, table_id, "awaiting_decision")
    waiting = player.get("/v1/hands", status="awaiting_decision").json()["items"]
    assert [h["status"] for h in waiting] == ["awaiting_decision"]
    assert player.get("/v1/hands", table_id=table_id + 1000).json()["items"] == []


def test_a_tables_hands_awaiting_a_decision_are_that_tables_alone(player: Caller) -> None:
    table_id = standard_table_id(player)
    waiting = play_until(player, table_id, "awaiting_decision")
    listed = player.get("/v1/hands", status="awaiting_decision", table_id=table_id).json()
    assert [h["id"] for h in listed["items"]] == [waiting["id"]]
    elsewhere = player.get("/v1/hands", status="awaiting_decision", table_id=table_id + 1000)
    assert elsewhere.json()["items"] == []


def _every_page(player: Caller, **query: Any) -> list[dict[str, Any]]:
    """Every hand of the history, page after page."""
    items: list[dict[str, Any]] = []
    cursor = None
    while True:
        page = player.get("/v1/hands", **query, **({"cursor": cursor} if cursor else {})).json()
        items += page["items"]
        cursor = page["next_cursor"]
        if cursor is None:
            return items


def test_history_filtered_to_settled_hands_lists_those_alone(player: Caller) -> None:
    table_id = standard_table_id(player)
    settled = play_until(player, table_id, "settled")
    tie = play_until(player, table_id, "awaiting_decision")
    decided = player.post(f"/v1/hands/{tie['id']}/decision", {"action": "surrender"}).json()
    waiting = play_until(player, table_id, "awaiting_decision")
    listed = _every_page(player, status="settled")
    assert [h["status"] for h in listed] == ["settled"] * len(listed)
    assert {settled["id"], decided["id"]} <= {h["id"] for h in listed}
    assert waiting["id"] not in {h["id"] for h in listed}


def test_a_malformed_cursor_is_a_validation_error(player: Caller) -> None:
    refused = player.get("/v1/hands", cursor="not-a-cursor")
    assert refused.status_code == 422 and refused.json()["code"] == "validation_error"


def test_a_players_money_moves_on_the_players_chain_with_that_chains_house(
    operator: Caller, settings: Settings
) -> None:
    players = [new_player(operator, deposit=10_000) for _ in range(2)]
    hands = [
        (player_id, play_until(caller, standard_table_id(caller), "settled"))
        for caller, player_id in players
    ]
    assert len({chain_for(str(player_id)) for player_id, _ in hands}) == 2
    database = Database.connect(settings.database_url)
    try:
        with database.transaction() as session:
            for player_id, hand in hands:
                chain = chain_for(str(player_id))
                posted = [
                    *transactions_for_reference(session, f"hand:{hand['id']}"),
                    *transactions_for_reference(session, f"player:{player_id}"),
                ]
                assert {txn.chain for txn in posted} == {chain}
                settlement = next(txn for txn in posted if txn.kind == "settlement")
                assert chart.house("USD", chain).code in {e.account for e in settlement.entries}
    finally:
        database.dispose()


def test_a_hand_names_the_engine_that_dealt_it_and_the_hash_of_its_rules(
    player: Caller,
) -> None:
    hand = play_until(player, standard_table_id(player), "awaiting_decision")
    rules = TableRules.from_dict(hand["rules"])
    assert hand["engine"] == {"version": ENGINE_VERSION, "rules_hash": rules_hash(rules)}
    decided = player.post(f"/v1/hands/{hand['id']}/decision", {"action": "war"}).json()
    assert decided["engine"] == hand["engine"]
    assert player.get(f"/v1/hands/{hand['id']}").json()["engine"] == hand["engine"]
