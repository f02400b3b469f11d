"""The `casino-war` command line: one parser, subcommands contributed by modules.

Each module of `COMMAND_MODULES` exposes `register(subparsers)`, which adds its commands and
sets `handler` (a function of the parsed namespace returning the exit status) on each. Adding
a command is adding its module's name to the tuple.
"""

import argparse
import importlib
import sys
from collections.abc import Callable, Sequence
from typing import Final, Protocol, cast

from api.cli.common import EXIT_USAGE, Subparsers, UsageError
from casino.errors import GameError

COMMAND_MODULES: Final = (
    "api.cli.game",
    "api.cli.service",
    "api.domain.audit.cli",
    "api.domain.reports.cli",
    "api.domain.hands.cli",
)

Handler = Callable[[argparse.Namespace], int]


class CommandModule(Protocol):
    def register(self, subparsers: Subparsers) -> None:
        """Add this module's subcommands, each with `set_defaults(handler=...)`."""


def build_parser() -> argparse.ArgumentParser:
    """The whole command line, every registered command included."""
    return _build()[0]


def _build() -> tuple[argparse.ArgumentParser, Subparsers]:
    parser = argparse.ArgumentParser(
        prog="casino-war",
        description="Casino War: odds, simulation and provably fair verification.",
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name in COMMAND_MODULES:
        cast(CommandModule, importlib.import_module(name)).register(subparsers)
    return parser, subparsers


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; returns the exit status (0 ok, 1 a check found a problem, 2 usage)."""
    parser, subparsers = _build()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exit_:  # argparse exits on --help (0) and on bad usage (2)
        return exit_.code if isinstance(exit_.code, int) else EXIT_USAGE
    handler = cast(Handler, args.handler)
    try:
        return handler(args)
    except (UsageError, GameError) as error:
        # Values argparse accepted but the game refuses (decks 9, an odd bet, a bad seed):
        # still bad usage, reported the way argparse reports its own.
        command = subparsers.choices.get(args.command, parser)
        command.print_usage(sys.stderr)
        print(f"{command.prog}: error: {error}", file=sys.stderr)
        return EXIT_USAGE
