"""Players, the cashier and tables, as operators run them."""

from datetime import UTC, datetime, timedelta

from freezegun import freeze_time

from api.db.database import Database
from api.settings import Settings
from ledger import chart
from ledger.chains import CHAINS, chain_for
from ledger.posting import balances
from tests.api.conftest import Caller, available, new_player, play_until, standard_table_id


def test_a_new_player_gets_a_token_that_works(operator: Caller) -> None:
    created = operator.post("/v1/players", {"display_name": "Bo", "external_ref": "crm-42"})
    assert created.status_code == 201
    body = created.json()
    assert body["token"].startswith("cw_")
    player = Caller(operator.client, body["token"])
    assert player.get("/v1/me").json()["display_name"] == "Bo"


def test_an_external_reference_belongs_to_one_player(operator: Caller) -> None:
    operator.post("/v1/players", {"external_ref": "crm-7"})
    refused = operator.post("/v1/players", {"external_ref": "crm-7"})
    assert refused.status_code == 422
    assert refused.json()["errors"][0]["field"] == "external_ref"


def test_a_deposit_reports_the_balance_after(operator: Caller) -> None:
    player, player_id = new_player(operator)
    receipt = operator.post(
        "/v1/cashier/deposits", {"player_id": player_id, "amount": 2_500, "currency": "USD"}
    ).json()
    assert receipt["balance_after"] == 2_500
    assert receipt["transaction_id"] > 0
    assert available(player) == 2_500


def test_cash_moves_through_the_cashier_account_of_the_players_chain(
    operator: Caller, settings: Settings
) -> None:
    first = second = new_player(operator)[1]
    while chain_for(str(second)) == chain_for(str(first)):
        second = new_player(operator)[1]
    for player_id in (first, second):
        operator.post(
            "/v1/cashier/deposits", {"player_id": player_id, "amount": 10_000, "currency": "USD"}
        )
    operator.post(
        "/v1/cashier/withdrawals", {"player_id": first, "amount": 2_500, "currency": "USD"}
    )
    first_chain, second_chain = chain_for(str(first)), chain_for(str(second))
    database = Database.connect(settings.database_url)
    try:
        with database.reading() as session:
            codes = [chart.cashier("USD", chain).code for chain in range(1, CHAINS + 1)]
            cashier = balances(session, codes)
    finally:
        database.dispose()
    assert cashier == {
        chart.cashier("USD", first_chain).code: 7_500,
        chart.cashier("USD", second_chain).code: 10_000,
    }


def test_a_withdrawal_beyond_the_balance_is_refused_and_moves_nothing(operator: Caller) -> None:
    player, player_id = new_player(operator, deposit=1_000)
    refused = operator.post(
        "/v1/cashier/withdrawals", {"player_id": player_id, "amount": 1_001, "currency": "USD"}
    )
    assert refused.status_code == 422
    assert refused.json()["code"] == "insufficient_funds"
    assert available(player) == 1_000


def test_money_in_a_currency_no_table_deals_is_a_currency_mismatch(operator: Caller) -> None:
    _, player_id = new_player(operator)
    refused = operator.post(
        "/v1/cashier/deposits", {"player_id": player_id, "amount": 100, "currency": "JPY"}
    )
    assert refused.status_code == 422
    assert refused.json()["code"] == "currency_mismatch"


def test_cashier_amounts_must_be_positive_integers(operator: Caller) -> None:
    _, player_id = new_player(operator)
    for amount in (0, -5, 1.5, "100"):
        refused = operator.post(
            "/v1/cashier/deposits", {"player_id": player_id, "amount": amount, "currency": "USD"}
        )
        assert refused.status_code == 422
        assert refused.json()["code"] == "validation_error"
        assert refused.json()["errors"][0]["field"] == "amount"


def test_a_deposit_for_an_unknown_player_is_not_found(operator: Caller) -> None:
    refused = operator.post(
        "/v1/cashier/deposits", {"player_id": 99_999, "amount": 100, "currency": "USD"}
    )
    assert refused.status_code == 404


def test_a_fresh_database_has_the_standard_table(operator: Caller) -> None:
    tables = operator.get("/v1/tables").json()["items"]
    assert len(tables) == 1
    standard = tables[0]
    assert standard["name"] == "standard"
    assert standard["open"] is True
    assert (standard["min_bet"], standard["max_bet"]) == (100, 100_000)
    assert (standard["max_tie_bet"], standard["bet_unit"], standard["currency"]) == (
        10_000,
        100,
        "USD",
    )
    assert (standard["decks"], standard["burn_cards"], standard["tie_payout"]) == (6, 3, 10)


def test_an_operator_opens_a_table_with_its_own_rules(operator: Caller) -> None:
    created = operator.post(
        "/v1/tables",
        {"name": "high-roller", "decks": 8, "war_tie_bonus": True, "min_bet": 1_000},
    )
    assert created.status_code == 201
    table = created.json()
    assert (table["decks"], table["war_tie_bonus"], table["min_bet"]) == (8, True, 1_000)
    assert operator.get(f"/v1/tables/{table['id']}").json() == table


def test_an_invalid_rule_set_is_refused_naming_the_field(operator: Caller) -> None:
    for rules, field in (
        ({"decks": 9}, "decks"),
        ({"bet_unit": 3}, "bet_unit"),
        ({"min_bet": 500, "max_bet": 100}, "max_bet"),
        ({"jokers_per_deck": 3}, "jokers_per_deck"),
    ):
        refused = operator.post("/v1/tables", {"name": f"bad-{field}", **rules})
        assert refused.status_code == 422, rules
        assert refused.json()["errors"][0]["field"] == field


def test_unknown_fields_are_refused(operator: Caller) -> None:
    refused = operator.post("/v1/tables", {"name": "typo", "deks": 4})
    assert refused.status_code == 422
    assert refused.json()["code"] == "validation_error"


def test_tables_are_paginated_by_cursor(operator: Caller) -> None:
    for n in range(3):
        operator.post("/v1/tables", {"name": f"t{n}"})
    first = operator.get("/v1/tables", limit=2).json()
    second = operator.get("/v1/tables", limit=2, cursor=first["next_cursor"]).json()
    last = operator.get("/v1/tables", limit=2, cursor=second["next_cursor"]).json()
    ids = [t["id"] for page in (first, second, last) for t in page["items"]]
    assert ids == sorted(ids)
    assert len(set(ids)) == 4  # the standard table and the three new ones, each once
    assert last["items"] == []
    assert last["next_cursor"] is None


def test_a_page_size_outside_1_to_200_is_a_validation_error(operator: Caller) -> None:
    for limit in (0, 201):
        refused = operator.get("/v1/tables", limit=limit)
        assert refused.status_code == 422
        assert refused.json()["code"] == "validation_error"


def test_an_operator_resolves_the_overdue_hands_as_the_house(operator: Caller) -> None:
    player, player_id = new_player(operator, deposit=10_000)
    hand = play_until(player, standard_table_id(player), "awaiting_decision")
    assert operator.post("/v1/hands/resolve-abandoned").json()["items"] == []
    with freeze_time(datetime.now(UTC) + timedelta(days=2)):
        resolved = operator.post("/v1/hands/resolve-abandoned")
    assert resolved.status_code == 200
    (item,) = resolved.json()["items"]
    assert (item["hand_id"], item["resolution"]) == (hand["id"], "surrender")
    settled = player.get(f"/v1/hands/{hand['id']}").json()
    assert (settled["status"], settled["decided_by"]) == ("settled", "timeout")
    (event,) = operator.get("/v1/events", type="hand_resolved_by_timeout").json()["items"]
    assert event["actor"]["role"] == "operator" and event["player_id"] == player_id


def test_players_cannot_resolve_hands(player: Caller) -> None:
    assert player.post("/v1/hands/resolve-abandoned").status_code == 403
