"""Invariants of the engine over random rule sets, seeds, bets and decisions (hypothesis)."""

from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from casino.fairness import HandSeeds, RandomStream, draw_cards
from casino.hand import Action, Hand, HandStatus, deal, decide, play
from casino.rules import GameRules
from casino.shoe import ordered_shoe

# Each example plays a run of consecutive nonces, so that about 95% of examples include a
# first-deal tie and the decision paths are exercised, not only the 93% of plain deals.
RUN = 40

rules_sets = st.builds(
    GameRules,
    decks=st.integers(1, 8),
    jokers_per_deck=st.integers(0, 2),
    ace_low=st.booleans(),
    burn_cards=st.integers(0, 5),
    tie_payout=st.integers(1, 100),
    war_tie_bonus=st.booleans(),
    surrender_allowed=st.booleans(),
)
server_seeds = st.binary(min_size=32, max_size=32).map(bytes.hex)
client_seeds = st.from_regex(r"[A-Za-z0-9_-]{1,64}", fullmatch=True)
hand_seeds = st.builds(HandSeeds, server_seeds, client_seeds, st.integers(0, 2**40))
bets = st.integers(1, 500_000).map(lambda half: 2 * half)
tie_bets = st.integers(0, 1_000_000)
actions = st.sampled_from(Action)


def _allowed(action: Action, rules: GameRules) -> Action:
    return Action.WAR if action is Action.SURRENDER and not rules.surrender_allowed else action


def _run(rules: GameRules, seeds: HandSeeds, bet: int, tie_bet: int, action: Action) -> list[Hand]:
    action = _allowed(action, rules)
    return [
        play(rules, HandSeeds(seeds.server_seed, seeds.client_seed, nonce), bet, tie_bet, action)
        for nonce in range(seeds.nonce, seeds.nonce + RUN)
    ]


@settings(max_examples=60)
@given(rules_sets, hand_seeds, bets, tie_bets, actions)
def test_money_is_conserved_between_player_and_house(
    rules: GameRules, seeds: HandSeeds, bet: int, tie_bet: int, action: Action
) -> None:
    for hand in _run(rules, seeds, bet, tie_bet, action):
        assert hand.status is HandStatus.SETTLED
        assert hand.net is not None
        assert hand.main_net is not None
        assert hand.total_returned is not None
        house_net = hand.total_staked - hand.total_returned
        assert hand.net + house_net == 0
        assert hand.net == hand.main_net + hand.tie_net
        assert hand.total_returned == hand.total_staked + hand.net
        assert hand.total_returned >= 0


@settings(max_examples=60)
@given(rules_sets, hand_seeds, bets, tie_bets, actions)
def test_a_hand_never_returns_more_than_its_rules_allow(
    rules: GameRules, seeds: HandSeeds, bet: int, tie_bet: int, action: Action
) -> None:
    best_main = 2 * bet if rules.war_tie_bonus else bet
    best_tie = rules.tie_payout * tie_bet
    for hand in _run(rules, seeds, bet, tie_bet, action):
        assert hand.main_net is not None
        assert hand.net is not None
        assert -2 * bet <= hand.main_net <= best_main
        assert -tie_bet <= hand.tie_net <= best_tie
        assert hand.net <= best_main + best_tie
        if hand.decision is None:  # no raise: at most even money on the main bet
            assert abs(hand.main_net) == bet


@settings(max_examples=60)
@given(rules_sets, hand_seeds, bets, tie_bets, actions)
def test_the_same_seeds_always_give_the_same_hand(
    rules: GameRules, seeds: HandSeeds, bet: int, tie_bet: int, action: Action
) -> None:
    assert _run(rules, seeds, bet, tie_bet, action) == _run(rules, seeds, bet, tie_bet, action)


@settings(max_examples=60)
@given(rules_sets, hand_seeds, bets, tie_bets, actions)
def test_play_equals_deal_then_decide(
    rules: GameRules, seeds: HandSeeds, bet: int, tie_bet: int, action: Action
) -> None:
    action = _allowed(action, rules)
    for played in _run(rules, seeds, bet, tie_bet, action):
        dealt = deal(rules, played.seeds, bet, tie_bet)
        expected = dealt if dealt.status is HandStatus.SETTLED else decide(dealt, action)
        assert played == expected


@settings(max_examples=60)
@given(rules_sets, hand_seeds)
def test_a_war_redeals_the_first_two_cards_unchanged(rules: GameRules, seeds: HandSeeds) -> None:
    shoe = ordered_shoe(rules.decks, rules.jokers_per_deck)
    war_cards = draw_cards(seeds, shoe, rules.cards_for_war)
    assert draw_cards(seeds, shoe, 2) == war_cards[:2]


@settings(max_examples=25)
@given(st.integers(1, 8), st.integers(0, 2), hand_seeds)
def test_drawing_the_whole_shoe_deals_every_card_exactly_once(
    decks: int, jokers: int, seeds: HandSeeds
) -> None:
    shoe = ordered_shoe(decks, jokers)
    assert Counter(draw_cards(seeds, shoe, len(shoe))) == Counter(shoe)


@settings(max_examples=25)
@given(st.integers(1, 432), hand_seeds)
def test_the_shuffle_never_deals_one_shoe_position_twice(size: int, seeds: HandSeeds) -> None:
    positions = [str(index) for index in range(size)]  # every physical position distinct
    drawn = draw_cards(seeds, positions, size)
    assert sorted(drawn, key=int) == positions


def _fisher_yates_over_a_copy(seeds: HandSeeds, shoe: list[str], count: int) -> list[str]:
    """docs/spec/fairness.md's shuffle as it reads: swap S[i] and S[j] in a copy, deal S[i]."""
    stream, cards = RandomStream(seeds), list(shoe)
    for i in range(count):
        j = i + stream.below(len(cards) - i)
        cards[i], cards[j] = cards[j], cards[i]
    return cards[:count]


@settings(max_examples=40)
@given(st.integers(1, 8), st.integers(0, 2), hand_seeds, st.integers(0, 40))
def test_drawing_without_copying_the_shoe_deals_what_a_shuffled_copy_deals(
    decks: int, jokers: int, seeds: HandSeeds, count: int
) -> None:
    shoe = ordered_shoe(decks, jokers)
    assert list(draw_cards(seeds, shoe, count)) == _fisher_yates_over_a_copy(
        seeds, list(shoe), count
    )
