"""The published vectors of fairness.md, reproduced bit for bit."""

import json
from pathlib import Path
from typing import Any

import pytest

from casino.fairness import HandSeeds, RandomStream, draw_cards, server_seed_hash
from casino.hand import Action, play
from casino.rules import GameRules
from casino.shoe import ordered_shoe

VECTORS: dict[str, list[dict[str, Any]]] = json.loads(
    (Path(__file__).parent.parent / "data" / "vectors.json").read_text(encoding="utf-8")
)


def _seeds(case: dict[str, Any]) -> HandSeeds:
    return HandSeeds(case["server_seed"], case["client_seed"], case["nonce"])


def _id(case: dict[str, Any]) -> str:
    parts = [case["client_seed"], str(case["nonce"])]
    for key in ("decks", "jokers_per_deck", "action", "war_tie_bonus", "n"):
        if key in case:
            parts.append(f"{key}={case[key]}")
    return "-".join(parts)


@pytest.mark.parametrize("case", VECTORS["shuffle"], ids=_id)
def test_server_seed_hash_is_sha256_of_the_raw_seed_bytes(case: dict[str, Any]) -> None:
    assert server_seed_hash(case["server_seed"]) == case["server_seed_hash"]


@pytest.mark.parametrize("case", VECTORS["shuffle"], ids=_id)
def test_stream_starts_with_the_published_u32s(case: dict[str, Any]) -> None:
    stream = RandomStream(_seeds(case))
    assert [stream.next_u32() for _ in case["first_u32"]] == case["first_u32"]


@pytest.mark.parametrize("case", VECTORS["shuffle"], ids=_id)
def test_shuffle_deals_the_published_first_seven_cards(case: dict[str, Any]) -> None:
    shoe = ordered_shoe(case["decks"], case["jokers_per_deck"])
    assert list(draw_cards(_seeds(case), shoe, 7)) == case["first_7_cards"]


@pytest.mark.parametrize("case", VECTORS["below"], ids=_id)
def test_below_rejects_and_consumes_exactly_as_published(case: dict[str, Any]) -> None:
    stream = RandomStream(_seeds(case))
    assert [stream.below(case["n"]) for _ in case["first_12"]] == case["first_12"]
    assert stream.consumed == case["u32_consumed"]


@pytest.mark.parametrize("case", VECTORS["settlement"], ids=_id)
def test_settlement_reproduces_cards_outcome_and_nets(case: dict[str, Any]) -> None:
    rules = GameRules(
        decks=case["decks"],
        burn_cards=case["burn_cards"],
        tie_payout=case["tie_payout"],
        war_tie_bonus=case["war_tie_bonus"],
    )
    action = None if case["action"] is None else Action(case["action"])
    expected = case["result"]

    hand = play(rules, _seeds(case), case["bet"], case["tie_bet"], action)

    shoe = ordered_shoe(rules.decks, rules.jokers_per_deck)
    assert list(draw_cards(hand.seeds, shoe, len(case["cards"]))) == case["cards"]
    assert list(hand.cards) == case["cards"][: len(hand.cards)]
    assert (hand.player_card, hand.dealer_card) == (expected["player"], expected["dealer"])
    if "war_player" in expected:
        assert hand.war is not None
        assert (hand.war.player_card, hand.war.dealer_card) == (
            expected["war_player"],
            expected["war_dealer"],
        )
        assert list(hand.cards) == case["cards"][: rules.cards_for_war]
    else:
        assert hand.war is None
    assert hand.main_net == expected["main"]
    assert hand.tie_net == expected["tie"]
    assert hand.outcome == expected["outcome"]
