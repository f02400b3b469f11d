"""What every command module shares: exit statuses, rule options, argument types, JSON out."""

import argparse
import json
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import date
from typing import Any, Final, TypeAlias

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

from api.domain.reports.gaming_day import parse_day
from casino.rules import GameRules

EXIT_OK: Final = 0
EXIT_PROBLEM: Final = 1
EXIT_USAGE: Final = 2

# Subscriptable for the type checker only, hence the string.
Subparsers: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"

_DEFAULTS: Final = GameRules()


class UsageError(Exception):
    """A request the command cannot serve as given; `main` reports it and exits 2."""


def add_rule_options(parser: argparse.ArgumentParser) -> None:
    """The rule options of cli.md, defaulting to rules.md (via `GameRules()` itself).

    Ranges are left to `GameRules`, so the command line refuses exactly what the game
    refuses, with the game's message naming the field.
    """
    group = parser.add_argument_group("rule options")
    group.add_argument(
        "--decks", type=int, default=_DEFAULTS.decks, help="decks in the shoe, 1-8 (%(default)s)"
    )
    group.add_argument(
        "--jokers-per-deck",
        type=int,
        default=_DEFAULTS.jokers_per_deck,
        help="jokers per deck, 0-2; a joker beats an ace (%(default)s)",
    )
    group.add_argument(
        "--ace-low",
        action=argparse.BooleanOptionalAction,
        default=_DEFAULTS.ace_low,
        help="the ace ranks below the 2",
    )
    group.add_argument(
        "--burn-cards",
        type=int,
        default=_DEFAULTS.burn_cards,
        help="cards burned before a war, 0-5 (%(default)s)",
    )
    group.add_argument(
        "--tie-payout",
        type=int,
        default=_DEFAULTS.tie_payout,
        help="the tie bet pays this to 1 (%(default)s)",
    )
    group.add_argument(
        "--war-tie-bonus",
        action=argparse.BooleanOptionalAction,
        default=_DEFAULTS.war_tie_bonus,
        help="a tie in the war pays the raise 2 to 1",
    )


def rules_from_args(args: argparse.Namespace) -> GameRules:
    """The validated rules named by `add_rule_options`; raises `InvalidRules` (exit 2)."""
    return GameRules(
        decks=args.decks,
        jokers_per_deck=args.jokers_per_deck,
        ace_low=args.ace_low,
        burn_cards=args.burn_cards,
        tie_payout=args.tie_payout,
        war_tie_bonus=args.war_tie_bonus,
    )


# Options whose value may itself begin with a dash: a client seed is 1-64 characters of
# [A-Za-z0-9_-], so `-Qx3…` is as likely as any other seed.
DASH_VALUED_OPTIONS: Final = frozenset({"--client-seed"})


def attach_dash_values(arguments: Sequence[str]) -> list[str]:
    """`--client-seed -Qx3` rewritten as `--client-seed=-Qx3`.

    argparse takes a separate value that begins with a dash for an option and refuses the
    command ("expected one argument", python/cpython#53580), so a revealed seed pasted as
    printed would fail one time in 64. A prefix argparse would expand (`--client`) is
    rewritten the same way. A following `--word` is still read as an option, so a
    forgotten value is reported as missing rather than swallowed.
    """
    attached: list[str] = []
    values = iter(arguments)
    for argument in values:
        following = next(values, None) if _names_a_dash_valued_option(argument) else None
        if following is None:
            attached.append(argument)
        elif following.startswith("-") and not following.startswith("--"):
            attached.append(f"{argument}={following}")
        else:
            attached.extend((argument, following))
    return attached


def _names_a_dash_valued_option(argument: str) -> bool:
    return len(argument) > 2 and any(o.startswith(argument) for o in DASH_VALUED_OPTIONS)


def examples(*commands: str) -> dict[str, Any]:
    """`add_parser` keywords that end a command's --help with examples, kept as written."""
    return {
        "epilog": "examples:\n" + "\n".join(f"  {command}" for command in commands),
        "formatter_class": argparse.RawDescriptionHelpFormatter,
    }


def positive_int(text: str) -> int:
    value = _int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text!r}")
    return value


def non_negative_int(text: str) -> int:
    value = _int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be zero or more, got {text!r}")
    return value


def positive_even_int(text: str) -> int:
    """A main bet: half of it must be whole for a surrender, so it is even."""
    value = positive_int(text)
    if value % 2:
        raise argparse.ArgumentTypeError(f"must be a positive even amount, got {text!r}")
    return value


def _int(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be an integer, got {text!r}") from None


def counted(number: int, noun: str, plural: str | None = None) -> str:
    """`1 hand`, `30,000 hands`: counts read as the numbers beside them do."""
    return f"{number:,} {noun if number == 1 else plural or noun + 's'}"


def print_json(document: Any) -> None:
    """The one JSON document a `--json` command prints on stdout."""
    sys.stdout.write(json.dumps(document, indent=2) + "\n")


def iso_day(text: str) -> date:
    try:
        return parse_day(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


@contextmanager
def progress_bar(
    total: int, label: str, *, enabled: bool
) -> Iterator[Callable[[int], None] | None]:
    """A rich progress bar on stderr, or no callback at all when it would not be seen."""
    if not enabled:
        yield None
        return
    columns = (
        TextColumn(label),
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
    )
    with Progress(*columns, console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task(label, total=total)

        def advance(done: int) -> None:
            bar.update(task, completed=done)

        yield advance
