"""Helpers for the War engine's tests: a game with chosen piles instead of a shuffle."""

from casino.fairness import HandSeeds
from casino.war.engine import play_turn
from casino.war.rules import WarRules, variant_rules
from casino.war.state import GameState, Policy, TurnInput, TurnRecord, WarGame

SEEDS = HandSeeds("5e" * 32, "war-tests", 0)


def game(
    variant: str = "classic", seats: tuple[Policy, ...] | None = None, **options: object
) -> WarGame:
    rules: WarRules = variant_rules(variant, None, options)
    top: Policy = "top"
    fixed = (top,) * rules.players
    return WarGame(rules, seats or fixed, SEEDS)


def arranged(*draw: str, won: tuple[str, ...] | None = None) -> GameState:
    """Piles written top first, one string a seat: `arranged("AS 2C", "KD 3C")`."""
    piles = tuple(tuple(pile.split()) for pile in draw)
    won_piles = tuple(tuple(pile.split()) for pile in won) if won else ((),) * len(piles)
    return GameState(draw=piles, won=won_piles)


def one_turn(
    war_game: WarGame, state: GameState, given: TurnInput | None = None
) -> tuple[GameState, TurnRecord]:
    return play_turn(war_game, state, given or TurnInput())
