"""`casino-war war simulate | verify`, called through `main` as the console script is."""

import json
from pathlib import Path
from typing import Any

import pytest

from api.cli import main
from casino.fairness import HandSeeds, server_seed_hash
from casino.war.log import input_to_dict, record_to_dict
from casino.war.replay import play_through
from casino.war.rules import variant_rules
from casino.war.state import TurnInput, WarGame

SEED = "3b" * 32


def _json_run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, Any, str]:
    status = main([*argv, "--json"])
    captured = capsys.readouterr()
    return status, json.loads(captured.out) if captured.out else None, captured.err


def test_simulate_reports_turns_wars_wins_draws_and_speed(
    capsys: pytest.CaptureFixture[str],
) -> None:
    status, run, err = _json_run(
        capsys, "war", "simulate", "--variant", "classic", "--games", "40",
        "--server-seed", SEED, "--client-seed", "cli",
    )  # fmt: skip
    assert (status, err) == (0, "")
    assert run["games"] == 40
    assert set(run["turns"]) == {"mean", "median", "p95"}
    assert sum(run["win_share"]) * 40 + run["draws"] + run["draws_by_cycle"] + run[
        "ended_by_cap"
    ] == pytest.approx(40)
    assert run["cards_per_second"] > 0


def test_simulate_takes_players_and_options(capsys: pytest.CaptureFixture[str]) -> None:
    status, run, _ = _json_run(
        capsys, "war", "simulate", "--variant", "steal", "--players", "3", "--games", "5",
        "--option", "face_down=3",
    )  # fmt: skip
    assert status == 0
    assert (run["rules"]["players"], run["rules"]["face_down"]) == (3, 3)
    assert run["seats"] == ["steal"] * 3


def test_an_unknown_option_is_a_usage_error_naming_it(capsys: pytest.CaptureFixture[str]) -> None:
    status = main(["war", "simulate", "--games", "1", "--option", "jokers=2"])
    assert status == 2 and "jokers" in capsys.readouterr().err


def _log_matches_the_replay(
    capsys: pytest.CaptureFixture[str], variant: str, client_seed: str
) -> bool:
    """`war verify` of a game played by fixed seats prints the engine's own log of it."""
    status, log, _ = _json_run(
        capsys, "war", "verify", "--variant", variant, "--server-seed", SEED,
        "--client-seed", client_seed, "--nonce", "4",
    )  # fmt: skip
    war = WarGame(variant_rules(variant), ("top", "top"), HandSeeds(SEED, client_seed, 4))
    _, records = play_through(war)
    return status == 0 and log["turns"] == [record_to_dict(r) for r in records]


def test_verify_prints_the_log_of_a_fixed_game(capsys: pytest.CaptureFixture[str]) -> None:
    assert _log_matches_the_replay(capsys, "razboi", "cli")


def test_verify_takes_a_client_seed_that_begins_with_a_dash(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert _log_matches_the_replay(capsys, "classic", "-cli")


def _published(tmp_path: Path, *, tamper: bool = False) -> Path:
    """A finished game in the API's published form, played by a human choosing the bottom
    card every other turn."""
    rules = variant_rules("online", 2, {"max_turns": 60})
    war = WarGame(rules, ("human", "random"), HandSeeds(SEED, "cli", 7))
    inputs = [TurnInput({0: "bottom" if n % 2 else "top"}) for n in range(60)]
    _, records = play_through(war, inputs)
    turns = [
        {"input": input_to_dict(given), "record": record_to_dict(record)}
        for given, record in zip(inputs, records, strict=False)
    ]
    if tamper:
        turns[10]["record"]["plays"][0]["card"] = "AS"
    document = {
        "rules": rules.as_dict(),
        "seats": [{"policy": "human"}, {"policy": "random"}],
        "server_seed": SEED,
        "server_seed_hash": server_seed_hash(SEED),
        "client_seed": "cli",
        "nonce": 7,
        "turns": turns,
    }
    path = tmp_path / "game.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    return path


def test_verify_replays_a_published_game_turn_by_turn(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    status, verdict, _ = _json_run(capsys, "war", "verify", "--game", str(_published(tmp_path)))
    assert status == 0
    assert verdict["matches"] and verdict["server_seed_hash_matches"]


def test_verify_names_the_first_turn_that_differs(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = _published(tmp_path, tamper=True)
    status, verdict, _ = _json_run(capsys, "war", "verify", "--game", str(path))
    assert status == 1 and verdict["first_difference"] == 11


def test_simulate_counts_one_game_in_the_singular(capsys: pytest.CaptureFixture[str]) -> None:
    status = main(["war", "simulate", "--variant", "classic", "--games", "1"])
    assert status == 0
    assert "classic: 1 game, 2 players" in capsys.readouterr().out
