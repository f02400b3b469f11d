"""The command table: every command listed, and only the chosen command's code imported."""

import argparse
import json
import subprocess
import sys
from pathlib import Path

import pytest

from api.cli import COMMANDS, build_parser, main

ROOT = Path(__file__).resolve().parent.parent.parent
SEED = "0" * 63 + "1"
# The web framework, the ORM, the migrations and the HTTP schemas: none is needed to play.
HEAVY = ("litestar", "sqlalchemy", "alembic", "pydantic")
# Runs one command as the console script does, then names the heavy packages it imported.
PROBE = f"""
import contextlib, io, json, sys
from api.cli import main
with contextlib.redirect_stdout(io.StringIO()):
    status = main(sys.argv[1:])
loaded = sorted({{name.split(".")[0] for name in sys.modules}} & set({HEAVY!r}))
print(json.dumps({{"status": status, "loaded": loaded}}))
"""


def _imports_of(*argv: str) -> dict[str, object]:
    result = subprocess.run(
        [sys.executable, "-c", PROBE, *argv],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    report: dict[str, object] = json.loads(result.stdout)
    return report


@pytest.mark.parametrize(
    "argv",
    [
        ("odds", "--json"),
        ("simulate", "--hands", "10", "--json"),
        ("verify", "--server-seed", SEED, "--client-seed", "x", "--nonce", "0", "--json"),
    ],
    ids=["odds", "simulate", "verify"],
)
def test_a_game_command_imports_no_database_or_web_code(argv: tuple[str, ...]) -> None:
    assert _imports_of(*argv) == {"status": 0, "loaded": []}


def test_top_level_help_imports_no_command_code() -> None:
    assert _imports_of("--help") == {"status": 0, "loaded": []}


def test_top_level_help_lists_every_command_with_its_help(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["--help"]) == 0
    help_text = " ".join(capsys.readouterr().out.split())
    for command in COMMANDS:
        assert f"{command.name} {command.help}" in help_text


def test_the_table_matches_what_the_modules_register(capsys: pytest.CaptureFixture[str]) -> None:
    """Names, order and help lines: the top level built from the table alone reads exactly as
    the parser with every module registered."""
    assert main(["--help"]) == 0
    assert capsys.readouterr().out == build_parser().format_help()


def test_a_command_help_exits_zero(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["verify", "--help"]) == 0
    assert "--server-seed-hash" in capsys.readouterr().out


def test_a_nested_command_is_found_after_its_parent(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", "payouts", "--help"]) == 0
    assert "--group-by" in capsys.readouterr().out


def test_the_payout_report_help_gives_its_date_format(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", "payouts", "--help"]) == 0
    assert "first gaming day, YYYY-MM-DD" in capsys.readouterr().out


def test_help_prints_a_percent_sign_once(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["simulate", "--help"]) == 0
    out = capsys.readouterr().out
    assert "95% confidence" in out and "%%" not in out


def test_no_command_is_bad_usage(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 2
    assert "the following arguments are required: COMMAND" in capsys.readouterr().err


def test_unknown_command_is_bad_usage_listing_the_commands(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["dance"]) == 2
    err = capsys.readouterr().err
    assert "invalid choice: 'dance'" in err
    assert all(repr(command.name) in err for command in COMMANDS)


def test_an_unknown_option_is_refused_with_its_commands_usage(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["simulate", "--hands", "5", "--seed", "x"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("usage: casino-war simulate ")
    assert "casino-war simulate: error: unrecognized arguments: --seed x" in err


def _leaves(parser: argparse.ArgumentParser) -> list[argparse.ArgumentParser]:
    subcommands = [
        action for action in parser._actions if isinstance(action, argparse._SubParsersAction)
    ]
    if not subcommands:
        return [parser]
    return [
        leaf
        for action in subcommands
        for child in action.choices.values()
        for leaf in _leaves(child)
    ]


def test_every_commands_help_shows_examples() -> None:
    without = [
        leaf.prog for leaf in _leaves(build_parser()) if "example" not in (leaf.epilog or "")
    ]
    assert without == []
