"""The in-process hand count (`benchmarks.hand_instructions`): every run of
`benchmarks.hand_once` deals the same cards, so two counts compare hand for hand."""

import asyncio
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

import api.domain.seeds.service as seeds
from benchmarks.hand_instructions import main
from benchmarks.hand_once import WARM_UP_HANDS, Layer, pinned_seeds, play

HANDS = 40


def _cards(database: Path) -> list[tuple[object, ...]]:
    with closing(sqlite3.connect(database)) as connection:
        return connection.execute(
            "SELECT player_card, dealer_card, war_player_card, war_dealer_card, net "
            "FROM hands ORDER BY id"
        ).fetchall()


def test_two_runs_deal_the_same_cards_and_make_the_same_requests(tmp_path: Path) -> None:
    runs = [tmp_path / "first", tmp_path / "second"]
    requests = []
    for directory in runs:
        directory.mkdir()
        with pinned_seeds():
            requests.append(asyncio.run(play(directory, HANDS)))
    assert requests[0] == requests[1] >= HANDS
    assert _cards(runs[0] / "hands.db") == _cards(runs[1] / "hands.db")


def test_the_seeds_are_the_services_own_again_once_the_run_is_over() -> None:
    server = vars(seeds)["new_server_seed"]
    with pinned_seeds():
        assert vars(seeds)["new_server_seed"]() == vars(seeds)["new_server_seed"]()
    assert vars(seeds)["new_server_seed"] is server


def _keys_recorded(database: Path) -> int:
    with closing(sqlite3.connect(database)) as connection:
        (count,) = connection.execute("SELECT count(*) FROM idempotency_records").fetchone()
        return int(count)


@pytest.mark.parametrize("layer", ["framework", "command", "unit"])
def test_each_layer_plays_the_hands_the_hot_path_plays(tmp_path: Path, layer: Layer) -> None:
    hot, inner = tmp_path / "hot", tmp_path / layer
    for directory in (hot, inner):
        directory.mkdir()
    with pinned_seeds():
        requests = asyncio.run(play(hot, HANDS))
        assert asyncio.run(play(inner, HANDS, layer=layer)) == requests
    assert _cards(inner / "hands.db") == _cards(hot / "hands.db")


@pytest.mark.parametrize(
    ("layer", "keyed"), [("command", True), ("unit", False), ("transaction", False)]
)
def test_of_the_layers_inside_http_only_command_records_a_key_a_request(
    tmp_path: Path, layer: Layer, keyed: bool
) -> None:
    played, warmed_up = tmp_path / "played", tmp_path / "warmed-up"
    for directory in (played, warmed_up):
        directory.mkdir()
    with pinned_seeds():
        requests = asyncio.run(play(played, HANDS, layer=layer))
        asyncio.run(play(warmed_up, 0, layer=layer))  # the setup's and warm-up's keys alone
    expected = _keys_recorded(warmed_up / "hands.db") + (requests if keyed else 0)
    assert _keys_recorded(played / "hands.db") == expected


def test_the_transaction_layer_deals_no_hand_and_counts_one_unit_a_hand(tmp_path: Path) -> None:
    with pinned_seeds():
        assert asyncio.run(play(tmp_path, HANDS, layer="transaction")) == HANDS
    assert len(_cards(tmp_path / "hands.db")) == WARM_UP_HANDS


@pytest.mark.parametrize("sizes", [["--small", "5", "--large", "5"], ["--small", "0"]])
def test_sizes_that_cannot_give_a_cost_per_hand_are_refused(sizes: list[str]) -> None:
    with pytest.raises(SystemExit):
        main(sizes)
