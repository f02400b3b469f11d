"""The game's commands, which need no database: `odds`, `simulate` and `verify`.

They are thin: every number comes from `casino` (exact odds, the simulation, the hand state
machine), so what they print is what the service computes.
"""

import argparse
import re
import sys
import time
from dataclasses import asdict
from fractions import Fraction
from typing import Any, Final

from rich.console import Console
from rich.table import Table

from api.cli.common import (
    EXIT_OK,
    EXIT_PROBLEM,
    Subparsers,
    UsageError,
    add_rule_options,
    examples,
    non_negative_int,
    positive_even_int,
    positive_int,
    print_json,
    progress_bar,
    rules_from_args,
)
from casino.fairness import HandSeeds, server_seed_hash
from casino.hand import Action, Hand, play, summary
from casino.odds import Odds, exact_odds
from casino.rules import GameRules
from casino.simulate import CONFIDENCE, Estimate, SimulationResult, simulate

_HASH: Final = re.compile(r"[0-9a-f]{64}")
_DEFAULT_BET: Final = 100


def register(subparsers: Subparsers) -> None:
    odds = subparsers.add_parser(
        "odds",
        help="exact house edges for a rule set",
        description="Exact house edges for a rule set, by card removal.",
        **examples("casino-war odds", "casino-war odds --decks 1 --war-tie-bonus --json"),
    )
    add_rule_options(odds)
    _add_json(odds)
    odds.set_defaults(handler=run_odds)

    _register_simulate(subparsers)
    _register_verify(subparsers)


def _register_simulate(subparsers: Subparsers) -> None:
    sim = subparsers.add_parser(
        "simulate",
        help="play N hands with the real engine and compare with the exact edges",
        description=(
            "Play nonces 0..N-1 of one seed pair with the real engine; print the sample house "
            "edges with 95% confidence intervals next to the exact ones."
        ),
        **examples(
            "casino-war simulate --hands 100000",
            "casino-war simulate --hands 20000 --strategy surrender --tie-bet 100 --json",
        ),
    )
    sim.add_argument("--hands", type=positive_int, required=True, help="hands to play (2 or more)")
    add_rule_options(sim)
    sim.add_argument(
        "--strategy",
        choices=[action.value for action in Action],
        default=Action.WAR.value,
        help="what the player does on every tie (%(default)s)",
    )
    _add_wager(sim)
    sim.add_argument("--server-seed", help="64 lowercase hex characters (default: fresh)")
    sim.add_argument("--client-seed", help="1-64 characters of A-Za-z0-9_- (default: fresh)")
    _add_json(sim)
    sim.set_defaults(handler=run_simulate)


def _register_verify(subparsers: Subparsers) -> None:
    verify = subparsers.add_parser(
        "verify",
        help="re-derive one hand from its seeds, with no database",
        description=(
            "Re-derive one hand from its seeds as fairness.md publishes: the cards, the "
            "outcome and what each bet netted. Exit 1 if --server-seed-hash is given and the "
            "server seed does not hash to it."
        ),
        **examples(
            "casino-war verify --server-seed HEX --client-seed abc --nonce 9 --bet 1000 "
            "--action war --server-seed-hash HASH",
            "casino-war verify --server-seed HEX --client-seed abc --nonce 0 --json",
        ),
    )
    verify.add_argument("--server-seed", required=True, help="the revealed server seed (hex)")
    verify.add_argument("--client-seed", required=True, help="the client seed of the pair")
    verify.add_argument("--nonce", type=non_negative_int, required=True, help="the hand's nonce")
    add_rule_options(verify)
    _add_wager(verify)
    verify.add_argument(
        "--action",
        choices=[action.value for action in Action],
        help="the decision taken if the first deal tied (default: none, the hand waits)",
    )
    verify.add_argument(
        "--server-seed-hash",
        help="the commitment shown before play; exit 1 if the server seed does not match it",
    )
    _add_json(verify)
    verify.set_defaults(handler=run_verify)


def _add_json(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--json", action="store_true", help="print one JSON document on stdout and nothing else"
    )


def _add_wager(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--bet",
        type=positive_even_int,
        default=_DEFAULT_BET,
        help="main bet in minor units, even (%(default)s)",
    )
    parser.add_argument(
        "--tie-bet", type=non_negative_int, default=0, help="tie bet in minor units (%(default)s)"
    )


# odds


def run_odds(args: argparse.Namespace) -> int:
    rules = rules_from_args(args)
    odds = exact_odds(rules)
    if args.json:
        print_json({**odds.as_floats(), "rules": asdict(rules)})
        return EXIT_OK
    table = Table(title=f"Exact odds: {_describe(rules)}")
    table.add_column("quantity")
    table.add_column("value", justify="right")
    for label, value in _odds_rows(odds, rules):
        table.add_row(label, _percent(value))
    Console().print(table)
    return EXIT_OK


def _odds_rows(odds: Odds, rules: GameRules) -> list[tuple[str, Fraction]]:
    return [
        ("house edge, always war (per initial bet)", odds.house_edge_war),
        ("house edge, always surrender", odds.house_edge_surrender),
        (f"house edge, tie bet at {rules.tie_payout} to 1", odds.house_edge_tie_bet),
        ("element of risk, always war (per amount wagered)", odds.element_of_risk_war),
        ("probability the first deal ties", odds.p_tie),
        ("probability a war ties", odds.p_war_tie),
    ]


# simulate


def run_simulate(args: argparse.Namespace) -> int:
    rules = rules_from_args(args)
    if args.hands < 2:
        raise UsageError("--hands must be at least 2 for a confidence interval")
    strategy = Action(args.strategy)
    show_progress = not args.json and sys.stderr.isatty()
    started = time.perf_counter()
    with progress_bar(args.hands, "simulating", enabled=show_progress) as progress:
        result = simulate(
            args.hands,
            rules=rules,
            strategy=strategy,
            bet=args.bet,
            tie_bet=args.tie_bet,
            server_seed=args.server_seed,
            client_seed=args.client_seed,
            progress=progress,
            progress_every=min(10_000, max(1, args.hands // 200)),
        )
    seconds = time.perf_counter() - started
    odds = exact_odds(rules)
    exact_main = odds.house_edge_war if strategy is Action.WAR else odds.house_edge_surrender
    if args.json:
        print_json(_simulation_document(result, exact_main, odds.house_edge_tie_bet, seconds))
        return EXIT_OK
    table = Table(title=f"{result.hands:,} hands, always {strategy.value}: {_describe(rules)}")
    table.add_column("house edge")
    table.add_column("sample", justify="right")
    table.add_column(f"{CONFIDENCE:.0%} interval", justify="right", no_wrap=True)
    table.add_column("exact", justify="right")
    table.add_column("inside", justify="center")
    rows = (
        ("main bet", result.main, exact_main),
        ("tie bet", result.tie, odds.house_edge_tie_bet),
    )
    for label, estimate, exact in rows:
        table.add_row(
            label,
            _percent(estimate.edge),
            f"{_percent(estimate.low)} to {_percent(estimate.high)}",
            _percent(exact),
            "yes" if estimate.contains(exact) else "no",
        )
    Console().print(table)
    # Plain prints: the seeds must copy whole to reproduce the run.
    print(f"server seed {result.server_seed}")
    print(f"client seed {result.client_seed}, nonces 0 to {result.hands - 1}")
    print(f"{result.hands / seconds:,.0f} hands per second")
    return EXIT_OK


def _simulation_document(
    result: SimulationResult, exact_main: Fraction, exact_tie: Fraction, seconds: float
) -> dict[str, Any]:
    return {
        "hands": result.hands,
        "strategy": result.strategy.value,
        "bet": result.bet,
        "tie_bet": result.tie_bet,
        "rules": asdict(result.rules),
        "server_seed": result.server_seed,
        "server_seed_hash": server_seed_hash(result.server_seed),
        "client_seed": result.client_seed,
        "confidence": CONFIDENCE,
        "house_edge_main": _estimate_document(result.main, exact_main),
        "house_edge_tie_bet": _estimate_document(result.tie, exact_tie),
        "outcomes": {outcome.value: count for outcome, count in result.outcomes.items()},
        "first_deal_ties": result.first_deal_ties,
        "main_net": result.main_net,
        "tie_net": result.tie_net,
        "net": result.net,
        "seconds": seconds,
        "hands_per_second": result.hands / seconds,
    }


def _estimate_document(estimate: Estimate, exact: Fraction) -> dict[str, Any]:
    return {
        "sample": estimate.edge,
        "ci_low": estimate.low,
        "ci_high": estimate.high,
        "standard_error": estimate.standard_error,
        "exact": float(exact),
        "exact_in_ci": estimate.contains(exact),
    }


# verify


def run_verify(args: argparse.Namespace) -> int:
    rules = rules_from_args(args)
    seeds = HandSeeds(args.server_seed, args.client_seed, args.nonce)
    computed_hash = server_seed_hash(seeds.server_seed)
    matches: bool | None = None
    if args.server_seed_hash is not None:
        published = args.server_seed_hash.lower()
        if not _HASH.fullmatch(published):
            raise UsageError("--server-seed-hash must be 64 hex characters")
        matches = published == computed_hash
    action = None if args.action is None else Action(args.action)
    hand = play(rules, seeds, args.bet, args.tie_bet, action)
    if args.json:
        print_json(_hand_document(hand, computed_hash, matches))
    else:
        _print_hand(hand, computed_hash, matches)
    if matches is False:
        print(
            f"casino-war verify: the server seed hashes to {computed_hash}, "
            f"not to the published {args.server_seed_hash}",
            file=sys.stderr,
        )
        return EXIT_PROBLEM
    return EXIT_OK


def _hand_document(hand: Hand, computed_hash: str, matches: bool | None) -> dict[str, Any]:
    return {
        "server_seed": hand.seeds.server_seed,
        "server_seed_hash": computed_hash,
        "server_seed_hash_matches": matches,
        "client_seed": hand.seeds.client_seed,
        "nonce": hand.seeds.nonce,
        "rules": asdict(hand.rules),
        **summary(hand),
    }


def _print_hand(hand: Hand, computed_hash: str, matches: bool | None) -> None:
    """Plain lines, never wrapped or truncated, so the hash and cards copy whole."""
    commitment = {
        None: "",
        True: " (matches the published hash)",
        False: " (DOES NOT match the published hash)",
    }[matches]
    first = "tie" if hand.first_deal_tied else "no tie"
    rows = [
        ("server seed hash", computed_hash + commitment),
        ("client seed", hand.seeds.client_seed),
        ("nonce", str(hand.seeds.nonce)),
        ("rules", _describe(hand.rules)),
        ("cards drawn", " ".join(hand.cards)),
        ("first deal", f"player {hand.player_card}, dealer {hand.dealer_card}: {first}"),
    ]
    if hand.war is not None:
        burned = " ".join(hand.war.burned) or "none"
        war = f"burned {burned}; player {hand.war.player_card}, dealer {hand.war.dealer_card}"
        rows.append(("war", war))
    if hand.outcome is None:
        rows.append(("outcome", "awaiting a decision: add --action war or --action surrender"))
    else:
        rows.append(("outcome", hand.outcome.value))
    rows += [
        ("bets", f"main {hand.bet}, tie {hand.tie_bet}"),
        ("main net", _signed(hand.main_net)),
        ("tie net", _signed(hand.tie_net)),
        ("net", _signed(hand.net)),
    ]
    for label, value in rows:
        print(f"{label:<18}{value}")


# formatting


def _describe(rules: GameRules) -> str:
    parts = [f"{rules.decks} deck{'s' if rules.decks > 1 else ''}"]
    if rules.jokers_per_deck:
        parts.append(f"{rules.jokers_per_deck} joker(s) per deck")
    if rules.ace_low:
        parts.append("ace low")
    parts.append(f"{rules.burn_cards} burn cards")
    parts.append(f"tie pays {rules.tie_payout} to 1")
    if rules.war_tie_bonus:
        parts.append("war-tie bonus")
    return ", ".join(parts)


def _percent(value: float | Fraction) -> str:
    return f"{float(value):.4%}"


def _signed(amount: int | None) -> str:
    return "-" if amount is None else f"{amount:+d}"
