"""`casino-war odds | simulate | verify`, called through `main` as the console script is."""

import json
from pathlib import Path
from typing import Any

import pytest

from api.cli import main
from casino.fairness import server_seed_hash

SEED = "0" * 63 + "1"
SEED_HASH = "ec4916dd28fc4c10d78e287ca5d9cc51ee1ae73cbfde08c6b37324cbfaac8bc5"
VECTORS: dict[str, list[dict[str, Any]]] = json.loads(
    (Path(__file__).parent.parent / "data" / "vectors.json").read_text(encoding="utf-8")
)


def _json_run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, Any, str]:
    """Exit status, the one JSON document on stdout, and stderr."""
    status = main([*argv, "--json"])
    captured = capsys.readouterr()
    return status, json.loads(captured.out) if captured.out else None, captured.err


def _verify(*extra: str) -> list[str]:
    return ["verify", "--server-seed", SEED, "--client-seed", "vectors", *extra]


# odds


def test_odds_json_gives_the_published_six_deck_figures(capsys: pytest.CaptureFixture[str]) -> None:
    status, odds, err = _json_run(capsys, "odds", "--decks", "6")
    assert (status, err) == (0, "")
    assert round(odds["house_edge_war"], 6) == 0.028771
    assert round(odds["house_edge_surrender"], 6) == 0.036977
    assert round(odds["house_edge_tie_bet"], 6) == 0.186495
    for key in (
        "p_tie",
        "house_edge_war",
        "house_edge_surrender",
        "house_edge_tie_bet",
        "element_of_risk_war",
    ):
        assert isinstance(odds[key], float)
    assert odds["rules"]["decks"] == 6


def test_odds_applies_every_rule_option(capsys: pytest.CaptureFixture[str]) -> None:
    status, odds, _ = _json_run(
        capsys,
        "odds",
        "--decks",
        "1",
        "--jokers-per-deck",
        "2",
        "--ace-low",
        "--burn-cards",
        "0",
        "--tie-payout",
        "8",
        "--war-tie-bonus",
    )
    assert status == 0
    assert odds["rules"] == {
        "decks": 1,
        "jokers_per_deck": 2,
        "ace_low": True,
        "burn_cards": 0,
        "tie_payout": 8,
        "war_tie_bonus": True,
        "surrender_allowed": True,
    }
    assert odds["p_tie"] == pytest.approx((13 * 4 * 3 + 2) / (54 * 53))


def test_odds_without_json_prints_a_readable_table(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["odds"]) == 0
    out = capsys.readouterr().out
    assert "2.8771%" in out
    assert "18.6495%" in out


@pytest.mark.parametrize(
    ("option", "value", "field"),
    [
        ("--decks", "9", "decks"),
        ("--decks", "0", "decks"),
        ("--jokers-per-deck", "3", "jokers_per_deck"),
        ("--burn-cards", "6", "burn_cards"),
        ("--tie-payout", "0", "tie_payout"),
    ],
)
def test_invalid_rule_value_is_bad_usage_naming_the_rule(
    capsys: pytest.CaptureFixture[str], option: str, value: str, field: str
) -> None:
    assert main(["odds", option, value, "--json"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert f"error: {field}: must be" in captured.err


def test_non_numeric_rule_value_is_bad_usage(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["odds", "--decks", "six"]) == 2
    assert "--decks" in capsys.readouterr().err


# verify


@pytest.mark.parametrize("case", VECTORS["settlement"])
def test_verify_reproduces_every_settlement_vector(
    capsys: pytest.CaptureFixture[str], case: dict[str, Any]
) -> None:
    argv = [
        "verify",
        "--server-seed",
        case["server_seed"],
        "--client-seed",
        case["client_seed"],
        "--nonce",
        str(case["nonce"]),
        "--decks",
        str(case["decks"]),
        "--burn-cards",
        str(case["burn_cards"]),
        "--tie-payout",
        str(case["tie_payout"]),
        "--bet",
        str(case["bet"]),
        "--tie-bet",
        str(case["tie_bet"]),
    ]
    if case["war_tie_bonus"]:
        argv.append("--war-tie-bonus")
    if case["action"]:
        argv += ["--action", case["action"]]
    status, hand, _ = _json_run(capsys, *argv)
    expected = case["result"]
    assert status == 0
    assert hand["outcome"] == expected["outcome"]
    assert (hand["main_net"], hand["tie_net"]) == (expected["main"], expected["tie"])
    assert hand["net"] == expected["main"] + expected["tie"]
    assert hand["cards"] == case["cards"][: len(hand["cards"])]


def test_verify_with_a_war_shows_every_card_and_the_war(capsys: pytest.CaptureFixture[str]) -> None:
    status, hand, err = _json_run(
        capsys, *_verify("--nonce", "11", "--bet", "1000", "--tie-bet", "200", "--action", "war")
    )
    assert (status, err) == (0, "")
    assert hand["server_seed_hash"] == SEED_HASH
    assert hand["cards"] == ["7C", "7H", "7H", "2D", "2S", "TC", "7C"]
    assert (hand["player_card"], hand["dealer_card"]) == ("7C", "7H")
    assert hand["war"] == {"burned": ["7H", "2D", "2S"], "player_card": "TC", "dealer_card": "7C"}
    assert hand["outcome"] == "war_win"
    assert (hand["main_net"], hand["tie_net"], hand["net"]) == (1000, 2000, 3000)


def test_verify_of_a_tie_without_an_action_leaves_the_outcome_null(
    capsys: pytest.CaptureFixture[str],
) -> None:
    status, hand, _ = _json_run(capsys, *_verify("--nonce", "11", "--tie-bet", "100"))
    assert status == 0
    assert hand["cards"] == ["7C", "7H"]
    assert hand["war"] is None
    assert hand["outcome"] is None
    assert (hand["main_net"], hand["tie_net"], hand["net"]) == (None, 1000, None)
    assert hand["status"] == "awaiting_decision"


def test_verify_defaults_to_a_bet_of_100_and_no_tie_bet(capsys: pytest.CaptureFixture[str]) -> None:
    status, hand, _ = _json_run(capsys, *_verify("--nonce", "0"))
    assert status == 0
    assert (hand["bet"], hand["tie_bet"]) == (100, 0)
    assert (hand["outcome"], hand["main_net"], hand["tie_net"], hand["net"]) == (
        "player_win",
        100,
        0,
        100,
    )
    assert hand["war"] is None


def test_verify_accepts_a_matching_commitment(capsys: pytest.CaptureFixture[str]) -> None:
    status, hand, _ = _json_run(capsys, *_verify("--nonce", "0", "--server-seed-hash", SEED_HASH))
    assert status == 0
    assert hand["server_seed_hash_matches"] is True


def test_verify_exits_one_when_the_seed_does_not_match_the_commitment(
    capsys: pytest.CaptureFixture[str],
) -> None:
    wrong = "0" * 64
    status, hand, err = _json_run(capsys, *_verify("--nonce", "0", "--server-seed-hash", wrong))
    assert status == 1
    assert hand["server_seed_hash_matches"] is False
    assert SEED_HASH in err
    assert wrong in err


def test_verify_without_json_prints_the_hand(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(_verify("--nonce", "11", "--action", "war", "--server-seed-hash", SEED_HASH)) == 0
    out = capsys.readouterr().out
    assert SEED_HASH in out
    assert "7C 7H 7H 2D 2S TC 7C" in out
    assert "war_win" in out


def test_verify_takes_a_client_seed_that_begins_with_a_dash(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """One random seed in 64 begins with `-`; pasted as printed, it must still verify."""
    argv = ["verify", "--server-seed", SEED, "--nonce", "0"]
    status, apart, err = _json_run(capsys, *argv, "--client-seed", "-Qx3")
    assert (status, err) == (0, "")
    assert _json_run(capsys, *argv, "--client-seed=-Qx3")[1] == apart
    assert _json_run(capsys, *argv, "--client", "-Qx3")[1] == apart  # as argparse abbreviates
    assert apart != _json_run(capsys, *argv, "--client-seed", "Qx3")[1]


def test_a_client_seed_option_without_its_value_is_reported_missing(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["verify", "--server-seed", SEED, "--client-seed", "--nonce", "0"]) == 2
    assert "--client-seed: expected one argument" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            [
                "verify",
                "--server-seed",
                SEED.upper().replace("0", "A"),
                "--client-seed",
                "x",
                "--nonce",
                "0",
            ],
            "server_seed",
        ),
        (["verify", "--server-seed", "abc", "--client-seed", "x", "--nonce", "0"], "server_seed"),
        (
            ["verify", "--server-seed", SEED, "--client-seed", "bad seed", "--nonce", "0"],
            "client_seed",
        ),
        (_verify("--nonce", "-1"), "--nonce"),
        (_verify("--nonce", "0", "--bet", "101"), "--bet"),
        (_verify("--nonce", "0", "--bet", "0"), "--bet"),
        (_verify("--nonce", "0", "--tie-bet", "-5"), "--tie-bet"),
        (_verify("--nonce", "0", "--action", "fold"), "--action"),
        (_verify("--nonce", "0", "--server-seed-hash", "xyz"), "--server-seed-hash"),
        (["verify", "--client-seed", "x", "--nonce", "0"], "--server-seed"),
    ],
)
def test_verify_refuses_bad_input_as_bad_usage(
    capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    assert main([*argv, "--json"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert message in captured.err


# simulate


def _simulate(*extra: str) -> list[str]:
    return ["simulate", "--server-seed", "5eed" * 16, "--client-seed", "cli", *extra]


def test_simulate_json_reports_sample_and_exact_edges(capsys: pytest.CaptureFixture[str]) -> None:
    status, result, err = _json_run(capsys, *_simulate("--hands", "3000"))
    assert (status, err) == (0, "")
    assert result["hands"] == 3000
    assert result["strategy"] == "war"
    assert sum(result["outcomes"].values()) == 3000
    for key in ("house_edge_main", "house_edge_tie_bet"):
        edge = result[key]
        assert edge["ci_low"] < edge["sample"] < edge["ci_high"]
        assert isinstance(edge["exact"], float)
    assert round(result["house_edge_main"]["exact"], 6) == 0.028771
    assert round(result["house_edge_tie_bet"]["exact"], 6) == 0.186495
    assert result["server_seed_hash"] == server_seed_hash("5eed" * 16)


def test_simulate_is_reproducible_from_its_seeds(capsys: pytest.CaptureFixture[str]) -> None:
    _, first, _ = _json_run(capsys, *_simulate("--hands", "500", "--strategy", "surrender"))
    _, second, _ = _json_run(capsys, *_simulate("--hands", "500", "--strategy", "surrender"))
    for volatile in ("seconds", "hands_per_second"):
        del first[volatile], second[volatile]
    assert first == second
    assert first["outcomes"]["surrender"] == first["first_deal_ties"]
    assert round(first["house_edge_main"]["exact"], 6) == 0.036977


def test_simulate_draws_fresh_seeds_and_prints_them(capsys: pytest.CaptureFixture[str]) -> None:
    status, result, _ = _json_run(capsys, "simulate", "--hands", "100", "--tie-bet", "100")
    assert status == 0
    assert len(result["server_seed"]) == 64
    assert result["client_seed"]
    assert result["tie_bet"] == 100


def test_simulate_without_json_prints_intervals_beside_exact_edges(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(_simulate("--hands", "1000")) == 0
    out = capsys.readouterr().out
    assert "95% interval" in out
    assert "2.8771%" in out
    assert "5eed" * 16 in out


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--hands", "1"], "at least 2"),
        (["--hands", "0"], "--hands"),
        (["--hands", "10", "--strategy", "fold"], "--strategy"),
        (["--hands", "10", "--decks", "0"], "decks"),
        ([], "--hands"),
    ],
)
def test_simulate_refuses_bad_input_as_bad_usage(
    capsys: pytest.CaptureFixture[str], extra: list[str], message: str
) -> None:
    assert main(["simulate", *extra, "--json"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert message in captured.err
