"""The hand state machine: its transitions, the ones it refuses, and what each outcome pays."""

from dataclasses import replace

import pytest

from casino.errors import HandNotAwaitingDecision, SurrenderNotAllowed
from casino.fairness import HandSeeds
from casino.hand import Action, Hand, HandStatus, Outcome, WarRound, deal, decide, play
from casino.rules import GameRules

# Nonces of this pair whose first deals are known (tests/data/vectors.json and a search).
SEED = "0" * 63 + "1"
PLAYER_WINS, DEALER_WINS, TIES = 0, 3, 11
BET, TIE_BET = 1000, 200


def _deal(nonce: int, rules: GameRules | None = None) -> Hand:
    return deal(rules or GameRules(), HandSeeds(SEED, "vectors", nonce), BET, TIE_BET)


def test_higher_player_card_settles_the_deal_as_a_player_win() -> None:
    hand = _deal(PLAYER_WINS)
    assert hand.status is HandStatus.SETTLED
    assert hand.outcome is Outcome.PLAYER_WIN


def test_higher_dealer_card_settles_the_deal_as_a_dealer_win() -> None:
    hand = _deal(DEALER_WINS)
    assert hand.status is HandStatus.SETTLED
    assert hand.outcome is Outcome.DEALER_WIN


def test_tied_deal_waits_for_a_decision_with_the_tie_bet_already_decided() -> None:
    hand = _deal(TIES)
    assert hand.status is HandStatus.AWAITING_DECISION
    assert hand.outcome is None
    assert (hand.main_net, hand.net, hand.total_returned) == (None, None, None)
    assert hand.tie_net == 10 * TIE_BET
    assert hand.cards == (hand.player_card, hand.dealer_card)


def test_decision_on_a_settled_hand_is_refused() -> None:
    with pytest.raises(HandNotAwaitingDecision):
        decide(_deal(PLAYER_WINS), Action.WAR)


def test_second_decision_on_a_hand_is_refused() -> None:
    hand = decide(_deal(TIES), Action.SURRENDER)
    with pytest.raises(HandNotAwaitingDecision):
        decide(hand, Action.WAR)


def test_surrender_is_refused_where_the_table_does_not_allow_it() -> None:
    hand = _deal(TIES, GameRules(surrender_allowed=False))
    with pytest.raises(SurrenderNotAllowed):
        decide(hand, Action.SURRENDER)
    assert hand.status is HandStatus.AWAITING_DECISION
    assert decide(hand, Action.WAR).status is HandStatus.SETTLED


def test_war_burns_then_deals_player_then_dealer_war_cards() -> None:
    for burn_cards in range(6):
        hand = decide(_deal(TIES, GameRules(burn_cards=burn_cards)), Action.WAR)
        assert hand.war is not None
        assert len(hand.war.burned) == burn_cards
        assert len(hand.cards) == 2 + burn_cards + 2
        assert hand.cards[-2:] == (hand.war.player_card, hand.war.dealer_card)


def test_war_raises_an_amount_equal_to_the_bet() -> None:
    hand = decide(_deal(TIES), Action.WAR)
    assert hand.raise_amount == BET
    assert hand.total_staked == 2 * BET + TIE_BET


@pytest.mark.parametrize(("bet", "tie_bet"), [(0, 0), (-2, 0), (101, 0), (100, -1)])
def test_deal_refuses_a_bet_that_is_not_positive_and_even_or_a_negative_tie_bet(
    bet: int, tie_bet: int
) -> None:
    with pytest.raises(ValueError):
        deal(GameRules(), HandSeeds(SEED, "vectors", 0), bet, tie_bet)


def _settled(outcome: Outcome, *, bonus: bool = False, tied: bool = False) -> Hand:
    """A hand with the given outcome, built directly: settlement depends on nothing else."""
    decision = {Outcome.SURRENDER: Action.SURRENDER}.get(outcome)
    war = None
    if outcome in (Outcome.WAR_WIN, Outcome.WAR_TIE, Outcome.WAR_LOSS):
        decision, war = Action.WAR, WarRound(("2C", "3C", "4C"), "5C", "6C")
    first = ("7C", "7H") if tied or decision else ("9C", "7H")
    return Hand(
        GameRules(war_tie_bonus=bonus),
        HandSeeds(SEED, "vectors", 0),
        BET,
        TIE_BET,
        *first,
        decision=decision,
        war=war,
        outcome=outcome,
    )


@pytest.mark.parametrize(
    ("outcome", "bonus", "main_net", "staked"),
    [
        (Outcome.PLAYER_WIN, False, BET, BET),
        (Outcome.DEALER_WIN, False, -BET, BET),
        (Outcome.SURRENDER, False, -BET // 2, BET),
        (Outcome.WAR_WIN, False, BET, 2 * BET),
        (Outcome.WAR_WIN, True, BET, 2 * BET),
        (Outcome.WAR_TIE, False, BET, 2 * BET),
        (Outcome.WAR_TIE, True, 2 * BET, 2 * BET),
        (Outcome.WAR_LOSS, False, -2 * BET, 2 * BET),
        (Outcome.WAR_LOSS, True, -2 * BET, 2 * BET),
    ],
)
def test_each_outcome_settles_the_main_bet_as_rules_md_says(
    outcome: Outcome, bonus: bool, main_net: int, staked: int
) -> None:
    hand = _settled(outcome, bonus=bonus)
    assert hand.main_net == main_net
    assert hand.total_staked == staked + TIE_BET
    assert hand.net == main_net + hand.tie_net
    assert hand.total_returned == hand.total_staked + hand.net


def test_tie_bet_pays_tie_payout_to_one_on_a_first_deal_tie_whatever_follows() -> None:
    for outcome in (Outcome.SURRENDER, Outcome.WAR_WIN, Outcome.WAR_TIE, Outcome.WAR_LOSS):
        assert _settled(outcome).tie_net == 10 * TIE_BET


def test_tie_bet_is_lost_when_the_first_deal_does_not_tie() -> None:
    assert _settled(Outcome.PLAYER_WIN).tie_net == -TIE_BET
    assert _settled(Outcome.DEALER_WIN).tie_net == -TIE_BET


def test_tie_payout_follows_the_rules() -> None:
    hand = replace(_settled(Outcome.WAR_WIN), rules=GameRules(tie_payout=8))
    assert hand.tie_net == 8 * TIE_BET


def test_play_without_an_action_leaves_a_tie_waiting() -> None:
    hand = play(GameRules(), HandSeeds(SEED, "vectors", TIES), BET, 0, None)
    assert hand.status is HandStatus.AWAITING_DECISION


def test_play_ignores_the_action_when_the_first_deal_does_not_tie() -> None:
    hand = play(GameRules(), HandSeeds(SEED, "vectors", PLAYER_WINS), BET, 0, Action.WAR)
    assert hand.decision is None
    assert hand.outcome is Outcome.PLAYER_WIN
    assert hand.total_staked == BET
