"""The `casino-war` command line: a table of commands, each imported only when it runs.

`COMMANDS` names every top-level command with the module that registers it and its help line.
The top level is built from the table alone, so `casino-war --help` or a mistyped command
imports no command's code; only the chosen command's module is imported, and its
`register(subparsers)` adds its commands, each with `set_defaults(handler=...)`. So `verify`,
which needs no database, never loads the web framework, the ORM or the migrations.

Adding a command is adding its row and its module's `register`. A module registering several
commands has them listed together, in the order it registers them; tests/cli/test_cli_registry.py
checks the table against the modules.
"""

import argparse
import importlib
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Final, Protocol, cast

from api.cli.common import EXIT_USAGE, Subparsers, UsageError, attach_dash_values
from casino.errors import GameError


@dataclass(frozen=True, slots=True)
class Command:
    """A top-level command: its name, the module whose `register` adds it, its help line."""

    name: str
    module: str
    help: str


COMMANDS: Final = (
    Command("odds", "api.cli.game", "exact house edges for a rule set"),
    Command(
        "simulate",
        "api.cli.game",
        "play N hands with the real engine and compare with the exact edges",
    ),
    Command("verify", "api.cli.game", "re-derive one hand from its seeds, with no database"),
    Command(
        "serve",
        "api.cli.service",
        "bring the database to the newest schema, then serve the API",
    ),
    Command("db", "api.cli.service", "database schema"),
    Command("token", "api.cli.service", "API tokens for operators and auditors"),
    Command("audit", "api.domain.audit.cli", "replay every hand in the range and check the ledger"),
    Command("report", "api.domain.reports.cli", "operator reports"),
    Command("hands", "api.domain.hands.cli", "hands awaiting a decision"),
    Command("war", "api.domain.war_games.cli", "the War family: simulate and verify games"),
    Command("events", "api.domain.events.cli", "the significant-events log"),
)

Handler = Callable[[argparse.Namespace], int]


class CommandModule(Protocol):
    def register(self, subparsers: Subparsers) -> None:
        """Add this module's subcommands, each with `set_defaults(handler=...)`."""


def build_parser() -> argparse.ArgumentParser:
    """The whole command line, every command's module imported and registered."""
    return _build({command.module for command in COMMANDS})[0]


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; returns the exit status (0 ok, 1 a check found a problem, 2 usage)."""
    arguments = attach_dash_values(sys.argv[1:] if argv is None else argv)
    parser, _ = _build(_chosen_modules(arguments))
    try:
        args, unknown = parser.parse_known_args(arguments)
        if unknown:  # refused with the usage of the command that was run, not the top's
            command = getattr(args, "usage_parser", None) or parser
            command.error(f"unrecognized arguments: {' '.join(unknown)}")
    except SystemExit as exit_:  # argparse exits on --help (0) and on bad usage (2)
        return exit_.code if isinstance(exit_.code, int) else EXIT_USAGE
    handler = cast(Handler, args.handler)
    try:
        return handler(args)
    except (UsageError, GameError) as error:
        # Values argparse accepted but the game refuses (decks 9, an odd bet, a bad seed):
        # still bad usage, reported the way argparse reports its own.
        command = getattr(args, "usage_parser", None) or parser
        command.print_usage(sys.stderr)
        print(f"{command.prog}: error: {error}", file=sys.stderr)
        return EXIT_USAGE
    except Exception as error:
        # A configuration or connection error: one line saying what to fix (exit 2). Imported
        # only now: the game commands load no database or web code.
        from api.startup import one_line

        sentence = one_line(error)
        if sentence is None or args.debug:
            raise
        print(f"casino-war: error: {sentence} (--debug shows the traceback)", file=sys.stderr)
        return EXIT_USAGE


def _chosen_modules(arguments: Sequence[str]) -> set[str]:
    """The module of the command the arguments name, if they name one.

    The top level takes no option with a value, so the command is the first argument that is
    not an option; anything else (no command, `--help`, a mistyped name) needs no module.
    """
    name = next((argument for argument in arguments if not argument.startswith("-")), None)
    return {command.module for command in COMMANDS if command.name == name}


def _build(modules: set[str]) -> tuple[argparse.ArgumentParser, Subparsers]:
    """The parser with the commands of `modules` registered in full, the rest by name and help.

    A command only named has no options and no handler: it stands in the top-level help and
    choices, and is never the one parsed, since its module is loaded whenever it is chosen.
    """
    parser = argparse.ArgumentParser(
        prog="casino-war",
        description="Casino War: odds, simulation and provably fair verification.",
    )
    parser.add_argument(
        "--debug",
        action="store_true",
        help="on a configuration or connection error, show the traceback too",
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    registered: set[str] = set()
    for command in COMMANDS:
        if command.module not in modules:
            subparsers.add_parser(command.name, help=command.help)
        elif command.module not in registered:
            cast(CommandModule, importlib.import_module(command.module)).register(subparsers)
            registered.add(command.module)
    _name_each_parser(parser)
    return parser, subparsers


def _name_each_parser(parser: argparse.ArgumentParser) -> None:
    """Every (sub)command's parser as a default of its own namespace, so that a refusal is
    reported with the usage of the command that was run (`report payouts`, not `report`)."""
    for action in parser._actions:  # argparse keeps its subparsers there, and only there
        if isinstance(action, argparse._SubParsersAction):
            for child in action.choices.values():
                child.set_defaults(usage_parser=child)
                _name_each_parser(child)
