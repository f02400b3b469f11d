"""`casino-war war simulate` and `casino-war war verify`: the War family, with no database.

Every figure comes from `casino.war`; the command only times the run (cards per second)
and prints.
"""

import argparse
import json
import sys
import time
from typing import Any

from rich.console import Console
from rich.table import Table

from api.cli.common import (
    EXIT_OK,
    EXIT_PROBLEM,
    Subparsers,
    UsageError,
    counted,
    examples,
    positive_int,
    print_json,
    progress_bar,
)
from api.domain.war_games.document import replay_document
from casino.fairness import HandSeeds
from casino.war.log import records_to_dicts
from casino.war.replay import play_through
from casino.war.rules import VARIANTS, variant_rules
from casino.war.simulate import WarSimulation, default_seats, simulate_war
from casino.war.state import WarGame

_EXAMPLES = """examples:
  casino-war war simulate --variant classic --games 1000
  casino-war war simulate --variant online --players 4 --option crazy_likelihood=100 --json
  casino-war war simulate --variant classic --option face_down=3 --option gather_order=shuffled
"""
_VERIFY_EXAMPLES = """examples:
  curl -s -H "Authorization: Bearer $TOKEN" $URL/v1/war-games/$ID > game.json
  casino-war war verify --game game.json
  casino-war war verify --variant razboi --server-seed $SEED --client-seed abc --nonce 0
"""


def register(subparsers: Subparsers) -> None:
    war = subparsers.add_parser("war", help="the War family: simulate and verify games")
    commands = war.add_subparsers(dest="war_command", metavar="COMMAND", required=True)
    simulate = commands.add_parser(
        "simulate",
        help="play many games of a variant and summarise them",
        description="Play N games of a War variant with fixed policies (top card; steal "
        "when it can in Steal War) and print turns, wars, wins and draws.",
        epilog=_EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _add_game_options(simulate)
    simulate.add_argument("--games", type=positive_int, default=1_000, help="games (%(default)s)")
    simulate.add_argument("--server-seed", help="64 lowercase hex characters (default: fresh)")
    simulate.add_argument("--client-seed", help="1-64 characters of A-Za-z0-9_- (default: fresh)")
    simulate.add_argument("--json", action="store_true", help="print one JSON document")
    simulate.set_defaults(handler=_simulate)

    verify = commands.add_parser(
        "verify",
        help="re-derive a game's log from its seeds and the players' choices",
        description="With --game: replay a finished game as the API published it (its "
        "revealed server seed, every turn's input) and compare each turn; exit 1 on any "
        "difference or if the seed does not match its commitment. Without: print the log of "
        "a game of fixed policies dealt from the given seeds.",
        epilog=_VERIFY_EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    verify.add_argument("--game", help="a game's JSON document from the API ('-': stdin)")
    _add_game_options(verify)
    verify.add_argument("--server-seed", help="the revealed server seed")
    verify.add_argument("--client-seed", help="the game's client seed")
    verify.add_argument("--nonce", type=int, default=0, help="the game's nonce (%(default)s)")
    verify.add_argument("--json", action="store_true", help="print one JSON document")
    verify.set_defaults(handler=_verify)

    audit = commands.add_parser(
        "audit",
        help="replay every stored War game against its log",
        description="Replay every War game in the database (CASINO_WAR_DATABASE_URL) from its "
        "seeds and stored inputs and compare each stored turn; exit 1 naming every game that "
        "differs or whose server seed does not match its commitment.",
        **examples("casino-war war audit", "casino-war war audit --json"),
    )
    audit.add_argument("--json", action="store_true", help="print one JSON document")
    audit.set_defaults(handler=_audit)


def _add_game_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--variant", choices=sorted(VARIANTS), default="classic", help="(%(default)s)"
    )
    parser.add_argument("--players", type=int, help="2 to 4 (default: the variant's)")
    parser.add_argument(
        "--option",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a rule option, repeatable (docs/war-games.md lists them)",
    )


def _options(pairs: list[str]) -> dict[str, str]:
    options: dict[str, str] = {}
    for pair in pairs:
        name, equals, value = pair.partition("=")
        if not equals or not name:
            raise UsageError(f"--option must be NAME=VALUE, got {pair!r}")
        options[name.strip()] = value.strip()
    return options


def _simulate(args: argparse.Namespace) -> int:
    rules = variant_rules(args.variant, args.players, _options(args.option))
    started = time.perf_counter()
    with progress_bar(args.games, "games", enabled=not args.json and sys.stderr.isatty()) as bar:
        run = simulate_war(
            rules,
            args.games,
            server_seed=args.server_seed,
            client_seed=args.client_seed,
            progress=bar,
        )
    seconds = time.perf_counter() - started
    document = _simulation_document(args.variant, run, seconds)
    if args.json:
        print_json(document)
        return EXIT_OK
    table = Table(title=f"{args.variant}: {counted(run.games, 'game')}, {rules.players} players")
    table.add_column("measure")
    table.add_column("value", justify="right")
    for label, value in _simulation_rows(run, seconds):
        table.add_row(label, value)
    Console().print(table)
    print(f"server seed {run.server_seed}")
    print(f"client seed {run.client_seed}, nonces 0 to {run.games - 1}")
    return EXIT_OK


def _simulation_rows(run: WarSimulation, seconds: float) -> list[tuple[str, str]]:
    rows = [
        ("turns, mean", f"{run.mean_turns:,.1f}"),
        ("turns, median", f"{run.median_turns:,.1f}"),
        ("turns, 95th percentile", f"{run.p95_turns:,}"),
        ("wars per game", f"{run.wars_per_game:,.2f}"),
        ("turns with a war", f"1 in {1 / run.wars_per_turn:,.1f}" if run.wars else "none"),
    ]
    rows += [(f"seat {seat} wins", f"{share:.1%}") for seat, share in enumerate(run.win_shares)]
    rows += [
        ("draws (no cards left)", f"{run.draws / run.games:.1%}"),
        ("draws by cycle", f"{run.cycles / run.games:.1%}"),
        ("ended by the turn cap", f"{run.capped / run.games:.1%}"),
        ("cards per second", f"{run.cards_played / seconds:,.0f}"),
    ]
    return rows


def _simulation_document(variant: str, run: WarSimulation, seconds: float) -> dict[str, Any]:
    return {
        "variant": variant,
        "rules": run.rules.as_dict(),
        "seats": list(run.seats),
        "games": run.games,
        "turns": {"mean": run.mean_turns, "median": run.median_turns, "p95": run.p95_turns},
        "wars_per_game": run.wars_per_game,
        "wars_per_turn": run.wars_per_turn,
        "win_share": list(run.win_shares),
        "draws": run.draws,
        "draws_by_cycle": run.cycles,
        "ended_by_cap": run.capped,
        "cards_played": run.cards_played,
        "seconds": seconds,
        "cards_per_second": run.cards_played / seconds,
        "server_seed": run.server_seed,
        "client_seed": run.client_seed,
    }


def _verify(args: argparse.Namespace) -> int:
    if args.game is not None:
        return _verify_document(args)
    if not (args.server_seed and args.client_seed):
        raise UsageError("give --game FILE, or --server-seed and --client-seed")
    rules = variant_rules(args.variant, args.players, _options(args.option))
    seeds = HandSeeds(args.server_seed, args.client_seed, args.nonce)
    _, records = play_through(WarGame(rules, default_seats(rules), seeds))
    log = records_to_dicts(records)
    if args.json:
        print_json({"rules": rules.as_dict(), "turns": log, "end": log[-1]["end"]})
        return EXIT_OK
    _print_log(log)
    return EXIT_OK


def _print_log(log: list[dict[str, Any]]) -> None:
    """A line a turn: each seat's cards, face-down ones in brackets, and who took them."""
    for record in log:
        plays = " ".join(_shown(play) for play in record["plays"])
        winner = "nobody" if record["winner"] is None else f"seat {record['winner']}"
        print(f"turn {record['turn']}: {plays} -> {winner}")
    end = log[-1]["end"]
    seat = "" if end["winner"] is None else f", seat {end['winner']}"
    print(f"end: {end['reason']}{seat}")


def _shown(play: dict[str, Any]) -> str:
    card = play["card"] if play["face_up"] else f"({play['card']})"
    return f"{play['seat']}:{card}"


def _verify_document(args: argparse.Namespace) -> int:
    text = sys.stdin.read() if args.game == "-" else _read(args.game)
    try:
        document = json.loads(text)
    except json.JSONDecodeError as error:
        raise UsageError(f"--game is not JSON: {error}") from None
    replay = replay_document(document)
    verdict = replay.verdict
    ok = verdict.matches and replay.commitment_matches
    if args.json:
        print_json(
            {
                "turns": verdict.turns,
                "matches": verdict.matches,
                "first_difference": verdict.first_difference,
                "server_seed_hash_matches": replay.commitment_matches,
            }
        )
    else:
        print(f"turns replayed: {verdict.turns}")
        print("commitment: " + ("matches" if replay.commitment_matches else "DOES NOT match"))
        if verdict.matches:
            print("log: every turn matches")
        else:
            print(f"log: turn {verdict.first_difference} DIFFERS from the replay")
    return EXIT_OK if ok else EXIT_PROBLEM


def _read(path: str) -> str:
    try:
        with open(path, encoding="utf-8") as file:
            return file.read()
    except OSError as error:
        raise UsageError(f"cannot read --game {path}: {error.strerror}") from None


def _audit(args: argparse.Namespace) -> int:
    # The database is imported here, not at the top: `war simulate` and `war verify` need none.
    from api.db.database import Database
    from api.domain.war_games.service import audit_all_games
    from api.settings import get_settings

    database = Database.connect(get_settings().database_url)
    try:
        with database.reading() as session:
            audits = list(audit_all_games(session))
    finally:
        database.dispose()
    failed = [a for a in audits if not (a.matches and a.server_seed_hash_matches)]
    if args.json:
        print_json(
            {
                "games": len(audits),
                "turns": sum(a.turns for a in audits),
                "failed": [
                    {"game_id": a.game_id, "first_difference": a.first_difference} for a in failed
                ],
            }
        )
    else:
        print(f"War games replayed: {len(audits)}, turns: {sum(a.turns for a in audits)}")
        for a in failed:
            print(f"game {a.game_id}: turn {a.first_difference} differs from the replay")
        print("every game matches" if not failed else f"games that differ: {len(failed):,}")
    return EXIT_PROBLEM if failed else EXIT_OK
