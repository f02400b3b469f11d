"""Who may do what: three roles, and players confined to their own wallet, seeds and hands."""

import pytest

from tests.api.conftest import Caller, new_player, play_until, standard_table_id


def test_a_request_without_a_token_is_unauthorized(operator: Caller) -> None:
    response = operator.client.get("/v1/tables")
    assert response.status_code == 401
    assert response.json()["code"] == "unauthorized"
    assert response.headers["content-type"].startswith("application/problem+json")


def test_an_unknown_token_is_unauthorized(operator: Caller) -> None:
    response = operator.client.get("/v1/tables", headers={"Authorization": "Bearer cw_nope"})
    assert response.status_code == 401


def test_a_malformed_authorization_header_is_unauthorized(operator: Caller) -> None:
    response = operator.client.get("/v1/tables", headers={"Authorization": "Basic abc"})
    assert response.status_code == 401


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/v1/players", {}),
        ("/v1/cashier/deposits", {"player_id": 1, "amount": 100, "currency": "USD"}),
        ("/v1/cashier/withdrawals", {"player_id": 1, "amount": 100, "currency": "USD"}),
        ("/v1/tables", {"name": "mine"}),
    ],
)
def test_only_operators_run_the_back_office(
    player: Caller, auditor: Caller, path: str, body: dict[str, object]
) -> None:
    for caller in (player, auditor):
        refused = caller.post(path, body)
        assert refused.status_code == 403
        assert refused.json()["code"] == "forbidden"


def test_only_players_play(operator: Caller, auditor: Caller) -> None:
    table_id = standard_table_id(operator)
    for caller in (operator, auditor):
        assert caller.post("/v1/hands", {"table_id": table_id, "bet": 100}).status_code == 403
        assert caller.get("/v1/me/seeds").status_code == 403
        assert caller.get("/v1/me").status_code == 403


def test_a_player_sees_their_own_wallet_but_not_anothers(operator: Caller) -> None:
    first, first_id = new_player(operator, deposit=100)
    _, second_id = new_player(operator)
    assert first.get(f"/v1/players/{first_id}").status_code == 200
    hidden = first.get(f"/v1/players/{second_id}")
    assert hidden.status_code == 404


def test_operators_and_auditors_see_any_wallet(operator: Caller, auditor: Caller) -> None:
    _, player_id = new_player(operator, deposit=700)
    for caller in (operator, auditor):
        balances = caller.get(f"/v1/players/{player_id}").json()["balances"]
        assert balances == [{"currency": "USD", "available": 700, "held": 0}]


def test_another_players_hand_is_not_found_never_forbidden(operator: Caller) -> None:
    owner, _ = new_player(operator, deposit=10_000)
    other, _ = new_player(operator, deposit=10_000)
    hand = play_until(owner, standard_table_id(owner), "awaiting_decision")
    assert other.get(f"/v1/hands/{hand['id']}").status_code == 404
    decided = other.post(f"/v1/hands/{hand['id']}/decision", {"action": "war"})
    assert decided.status_code == 404
    assert owner.get(f"/v1/hands/{hand['id']}").json()["status"] == "awaiting_decision"


def test_a_players_history_holds_only_their_hands(operator: Caller) -> None:
    owner, _ = new_player(operator, deposit=10_000)
    other, other_id = new_player(operator, deposit=10_000)
    play_until(owner, standard_table_id(owner), "settled")
    play_until(other, standard_table_id(other), "settled")
    mine = owner.get("/v1/hands", player_id=other_id).json()["items"]
    assert mine
    assert {h["player_id"] for h in mine} != {other_id}


def test_operators_filter_history_by_player(operator: Caller, auditor: Caller) -> None:
    owner, owner_id = new_player(operator, deposit=10_000)
    other, _ = new_player(operator, deposit=10_000)
    play_until(owner, standard_table_id(owner), "settled")
    play_until(other, standard_table_id(other), "settled")
    for caller in (operator, auditor):
        hands = caller.get("/v1/hands", player_id=owner_id).json()["items"]
        assert hands
        assert {h["player_id"] for h in hands} == {owner_id}
