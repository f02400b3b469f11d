"""Every table publishes its house edge per bet and its RTP; rules that would give the player
the edge are refused unless the operator means it."""

from tests.api.conftest import Caller


def test_every_table_view_publishes_its_house_edges_and_rtp(player: Caller) -> None:
    standard = player.get("/v1/tables").json()["items"][0]
    assert standard["house_edge"] == {
        "war": "0.028771",
        "surrender": "0.036977",
        "tie_bet": "0.186495",
    }
    assert standard["rtp"] == "0.971229"
    assert player.get(f"/v1/tables/{standard['id']}").json()["house_edge"] == standard["house_edge"]


def test_a_bet_the_table_does_not_offer_publishes_no_edge(operator: Caller) -> None:
    table = operator.post(
        "/v1/tables", {"name": "no-side-bets", "surrender_allowed": False, "max_tie_bet": 0}
    ).json()
    assert (table["house_edge"]["surrender"], table["house_edge"]["tie_bet"]) == (None, None)


def test_rules_giving_the_player_the_edge_are_refused_and_create_nothing(
    operator: Caller,
) -> None:
    refused = operator.post("/v1/tables", {"name": "generous", "tie_payout": 20})
    assert refused.status_code == 422
    assert refused.json()["code"] == "player_advantage"
    assert "tie_bet" in refused.json()["detail"]
    assert [t["name"] for t in operator.get("/v1/tables").json()["items"]] == ["standard"]


def test_an_operator_may_open_a_player_advantage_table_deliberately(operator: Caller) -> None:
    created = operator.post(
        "/v1/tables", {"name": "promotion", "tie_payout": 20, "allow_player_advantage": True}
    )
    assert created.status_code == 201
    assert created.json()["house_edge"]["tie_bet"].startswith("-")
