"""The simulation: it plays the real engine faithfully, and it agrees with the exact odds."""

import math
from fractions import Fraction

import pytest

from casino.errors import InvalidSeed, SurrenderNotAllowed
from casino.fairness import HandSeeds
from casino.hand import Action, Outcome, play
from casino.odds import exact_odds
from casino.rules import GameRules
from casino.simulate import Estimate, simulate

SERVER_SEED = "5eed" * 16
CLIENT_SEED = "simulation"


def test_simulation_totals_equal_the_hands_played_one_by_one() -> None:
    rules = GameRules(decks=2, war_tie_bonus=True, tie_payout=8)
    result = simulate(
        600,
        rules=rules,
        bet=1000,
        tie_bet=300,
        server_seed=SERVER_SEED,
        client_seed=CLIENT_SEED,
    )
    hands = [
        play(rules, HandSeeds(SERVER_SEED, CLIENT_SEED, nonce), 1000, 300, Action.WAR)
        for nonce in range(600)
    ]
    assert result.main_net == sum(hand.main_net or 0 for hand in hands)
    assert result.tie_net == sum(hand.tie_net for hand in hands)
    assert result.net == sum(hand.net or 0 for hand in hands)
    assert result.first_deal_ties == sum(hand.first_deal_tied for hand in hands)
    assert dict(result.outcomes) == {
        outcome: sum(hand.outcome is outcome for hand in hands) for outcome in Outcome
    }
    assert result.main.edge == pytest.approx(-result.main_net / (600 * 1000))
    assert result.tie.edge == pytest.approx(-result.tie_net / (600 * 300))


def test_surrender_strategy_surrenders_every_tie() -> None:
    result = simulate(
        2000, strategy=Action.SURRENDER, server_seed=SERVER_SEED, client_seed=CLIENT_SEED
    )
    assert result.outcomes[Outcome.SURRENDER] == result.first_deal_ties > 0
    assert all(result.outcomes[outcome] == 0 for outcome in (Outcome.WAR_WIN, Outcome.WAR_LOSS))


def test_tie_bet_edge_is_estimated_even_without_a_tie_bet() -> None:
    result = simulate(2000, tie_bet=0, server_seed=SERVER_SEED, client_seed=CLIENT_SEED)
    ties = result.first_deal_ties
    assert result.tie_net == 0
    assert result.tie.edge == pytest.approx(-(10 * ties - (2000 - ties)) / 2000)


def test_same_seeds_give_the_same_simulation() -> None:
    first = simulate(1000, server_seed=SERVER_SEED, client_seed=CLIENT_SEED)
    assert simulate(1000, server_seed=SERVER_SEED, client_seed=CLIENT_SEED) == first


def test_fresh_seeds_are_drawn_when_none_are_given() -> None:
    first, second = simulate(2), simulate(2)
    assert first.server_seed != second.server_seed
    assert first.client_seed != second.client_seed
    HandSeeds(first.server_seed, first.client_seed, 0)  # both valid


def test_progress_is_reported_every_k_hands_and_at_the_end() -> None:
    seen: list[int] = []
    simulate(
        2500,
        server_seed=SERVER_SEED,
        client_seed=CLIENT_SEED,
        progress=seen.append,
        progress_every=1000,
    )
    assert seen == [1000, 2000, 2500]


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [
        ({"hands": 1}, ValueError),
        ({"hands": 10, "bet": 101}, ValueError),
        ({"hands": 10, "tie_bet": -1}, ValueError),
        ({"hands": 10, "progress_every": 0}, ValueError),
        ({"hands": 10, "server_seed": "AB" * 32}, InvalidSeed),
        ({"hands": 10, "client_seed": "no spaces"}, InvalidSeed),
        (
            {
                "hands": 10,
                "strategy": Action.SURRENDER,
                "rules": GameRules(surrender_allowed=False),
            },
            SurrenderNotAllowed,
        ),
    ],
)
def test_simulation_refuses_what_the_game_would_refuse(
    kwargs: dict[str, object], error: type[Exception]
) -> None:
    with pytest.raises(error):
        simulate(**kwargs)  # type: ignore[arg-type]


def test_estimate_is_the_house_side_of_the_sample_mean_with_a_normal_interval() -> None:
    # Player nets of +2, -2, -2, -2 on bets of 2: per unit +1, -1, -1, -1, so the mean is
    # -0.5 and the sample variance (2.25 + 3 * 0.25) / 3 = 1.
    estimate = Estimate.from_sums(4, -4, 16, 2)
    assert estimate.edge == 0.5
    assert estimate.standard_error == pytest.approx(math.sqrt(1 / 4))
    assert estimate.low == pytest.approx(0.5 - 1.959964 * estimate.standard_error)
    assert estimate.contains(Fraction(1, 2))
    assert not estimate.contains(estimate.high + 1e-9)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("rules", "strategy"),
    [
        (GameRules(), Action.WAR),
        (GameRules(), Action.SURRENDER),
        (GameRules(decks=1, jokers_per_deck=2, war_tie_bonus=True, burn_cards=5), Action.WAR),
    ],
    ids=["six-decks-war", "six-decks-surrender", "one-deck-jokers-bonus-war"],
)
def test_two_hundred_thousand_hands_agree_with_the_exact_edges(
    rules: GameRules, strategy: Action
) -> None:
    result = simulate(
        200_000, rules=rules, strategy=strategy, server_seed=SERVER_SEED, client_seed=CLIENT_SEED
    )
    odds = exact_odds(rules)
    exact_main = odds.house_edge_war if strategy is Action.WAR else odds.house_edge_surrender
    assert result.main.contains(exact_main), (result.main, float(exact_main))
    assert result.tie.contains(odds.house_edge_tie_bet), (
        result.tie,
        float(odds.house_edge_tie_bet),
    )
    # The intervals are tight enough to mean something: about +-0.5% and +-2%.
    assert result.main.half_width < 0.006
    assert result.tie.half_width < 0.02
