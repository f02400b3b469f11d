"""The in-process hand count (`benchmarks.hand_instructions`): every run of
`benchmarks.hand_once` deals the same cards, so two counts compare hand for hand."""

import asyncio
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

import api.domain.seeds.service as seeds
from benchmarks.hand_instructions import main
from benchmarks.hand_once import pinned_seeds, play

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


def test_the_framework_path_plays_the_same_hands(tmp_path: Path) -> None:
    hot, framework = tmp_path / "hot", tmp_path / "framework"
    for directory in (hot, framework):
        directory.mkdir()
    with pinned_seeds():
        asyncio.run(play(hot, HANDS))
        assert asyncio.run(play(framework, HANDS, hot_path=False)) >= HANDS
    assert _cards(framework / "hands.db") == _cards(hot / "hands.db")


@pytest.mark.parametrize("sizes", [["--small", "5", "--large", "5"], ["--small", "0"]])
def test_sizes_that_cannot_give_a_cost_per_hand_are_refused(sizes: list[str]) -> None:
    with pytest.raises(SystemExit):
        main(sizes)
