"""Fairness seeds: commitment before play, reveal on rotation, re-derivation by anyone."""

import hashlib
from typing import Any

from casino.fairness import HandSeeds
from casino.hand import Action, play
from casino.rules import TableRules
from tests.api.conftest import Caller, play_until, standard_table_id


def test_the_commitment_is_shown_before_play_and_the_seed_is_not(player: Caller) -> None:
    seeds = player.get("/v1/me/seeds").json()
    assert set(seeds) == {"server_seed_hash", "client_seed", "next_nonce"}
    assert seeds["next_nonce"] == 0
    hand = play_until(player, standard_table_id(player), "settled")
    assert hand["fairness"]["server_seed_hash"] == seeds["server_seed_hash"]
    assert hand["fairness"]["server_seed"] is None


def test_rotation_reveals_the_seed_behind_the_commitment(player: Caller) -> None:
    committed = player.get("/v1/me/seeds").json()
    play_until(player, standard_table_id(player), "settled")
    rotation = player.post("/v1/me/seeds/rotate", {"client_seed": "my-own_seed"}).json()
    revealed = rotation["revealed"]
    assert revealed["server_seed_hash"] == committed["server_seed_hash"]
    assert (
        hashlib.sha256(bytes.fromhex(revealed["server_seed"])).hexdigest()
        == (committed["server_seed_hash"])
    )
    assert revealed["hands"] >= 1
    assert rotation["current"]["client_seed"] == "my-own_seed"
    assert rotation["current"]["next_nonce"] == 0
    assert rotation["current"]["server_seed_hash"] != committed["server_seed_hash"]


def test_rotation_is_refused_while_a_hand_awaits_a_decision(player: Caller) -> None:
    play_until(player, standard_table_id(player), "awaiting_decision")
    refused = player.post("/v1/me/seeds/rotate", {})
    assert refused.status_code == 409 and refused.json()["code"] == "unfinished_hand"


def test_an_invalid_client_seed_is_a_validation_error(player: Caller) -> None:
    refused = player.post("/v1/me/seeds/rotate", {"client_seed": "spaces are not allowed"})
    assert refused.status_code == 422 and refused.json()["code"] == "validation_error"


def test_revealed_pairs_are_listed_newest_first(player: Caller) -> None:
    player.post("/v1/me/seeds/rotate", {})
    player.post("/v1/me/seeds/rotate", {})
    pairs = player.get("/v1/me/seeds/revealed").json()["items"]
    assert len(pairs) == 2 and all(len(p["server_seed"]) == 64 for p in pairs)


def test_an_auditor_sees_the_unrevealed_seed_and_a_player_never_does(
    player: Caller, auditor: Caller
) -> None:
    hand = play_until(player, standard_table_id(player), "settled")
    assert player.get(f"/v1/hands/{hand['id']}").json()["fairness"]["server_seed"] is None
    audited = auditor.get(f"/v1/hands/{hand['id']}").json()
    assert audited["fairness"]["server_seed"] is not None
    listed = player.get("/v1/hands").json()["items"]
    assert all(h["fairness"]["server_seed"] is None for h in listed)


def test_a_whole_session_re_derives_hand_by_hand_from_the_revealed_seed(
    player: Caller,
) -> None:
    """Deposit, many hands with wars and surrenders, rotate, then replay every hand."""
    table_id = standard_table_id(player)
    actions = iter([Action.WAR, Action.SURRENDER] * 50)
    played: list[dict[str, Any]] = []
    while len(played) < 40:
        hand = player.post("/v1/hands", {"table_id": table_id, "bet": 200, "tie_bet": 100}).json()
        if hand["status"] == "awaiting_decision":
            hand = player.post(f"/v1/hands/{hand['id']}/decision", {"action": next(actions)}).json()
        played.append(hand)
    revealed = player.post("/v1/me/seeds/rotate", {}).json()["revealed"]
    assert revealed["hands"] == len(played)

    for hand in played:
        shown = player.get(f"/v1/hands/{hand['id']}").json()
        assert shown["fairness"]["server_seed"] == revealed["server_seed"]
        rules = TableRules.from_dict(shown["rules"])
        seeds = HandSeeds(
            revealed["server_seed"], revealed["client_seed"], shown["fairness"]["nonce"]
        )
        decision = Action(shown["decision"]) if shown["decision"] else None
        derived = play(rules.game, seeds, shown["bet"], shown["tie_bet"], decision)
        assert (derived.player_card, derived.dealer_card) == (
            shown["player_card"],
            shown["dealer_card"],
        )
        assert derived.outcome == shown["outcome"] and derived.net == shown["net"]
        if derived.war is not None:
            assert list(derived.war.burned) == shown["war"]["burned"]
            assert derived.war.player_card == shown["war"]["player_card"]
    nonces = sorted(h["fairness"]["nonce"] for h in played)
    assert nonces == list(range(len(played)))
