"""The in-process hand count (`benchmarks.hand_instructions`): every run of
`benchmarks.hand_once` deals the same cards, so two counts compare hand for hand, and each
layer plays the hands the hot path plays, on SQLite and on PostgreSQL."""

import asyncio
from collections.abc import Callable, Iterator
from contextlib import ExitStack

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.pool import NullPool

import api.domain.seeds.service as seeds
from api.db.database import Database
from benchmarks import hand_instructions, scratch
from benchmarks.hand_instructions import main
from benchmarks.hand_once import WARM_UP_HANDS, Layer, pinned_seeds, play
from ledger.database import normalize_url
from tests.benchmarks.postgres import postgres_server

HANDS = 40

FreshDatabase = Callable[[], str]


@pytest.fixture(params=["sqlite", "postgresql"])
def fresh_database(request: pytest.FixtureRequest) -> Iterator[FreshDatabase]:
    """Fresh databases of one kind, as many as the test asks for, dropped afterwards."""
    kind: str = request.param
    server = postgres_server() if kind == "postgresql" else None
    with ExitStack() as stack:
        yield lambda: stack.enter_context(scratch.scratch_database(kind, server, "hand_once"))


def _rows(url: str, query: str) -> list[tuple[object, ...]]:
    engine = create_engine(normalize_url(url), poolclass=NullPool)
    try:
        with engine.connect() as connection:
            return [tuple(row) for row in connection.execute(text(query))]
    finally:
        engine.dispose()


def _cards(url: str) -> list[tuple[object, ...]]:
    return _rows(
        url,
        "SELECT player_card, dealer_card, war_player_card, war_dealer_card, net "
        "FROM hands ORDER BY id",
    )


def _keys_recorded(url: str) -> int:
    [(count,)] = _rows(url, "SELECT count(*) FROM idempotency_records")
    assert isinstance(count, int)
    return count


def test_two_runs_deal_the_same_cards_and_make_the_same_requests(
    fresh_database: FreshDatabase,
) -> None:
    first, second = fresh_database(), fresh_database()
    with pinned_seeds():
        requests = [asyncio.run(play(url, HANDS)) for url in (first, second)]
    assert requests[0] == requests[1] >= HANDS
    assert _cards(first) == _cards(second)


def test_the_seeds_are_the_services_own_again_once_the_run_is_over() -> None:
    server = vars(seeds)["new_server_seed"]
    with pinned_seeds():
        assert vars(seeds)["new_server_seed"]() == vars(seeds)["new_server_seed"]()
    assert vars(seeds)["new_server_seed"] is server


@pytest.mark.parametrize("layer", ["framework", "command", "unit"])
def test_each_layer_plays_the_hands_the_hot_path_plays(
    fresh_database: FreshDatabase, layer: Layer
) -> None:
    hot, inner = fresh_database(), fresh_database()
    with pinned_seeds():
        requests = asyncio.run(play(hot, HANDS))
        assert asyncio.run(play(inner, HANDS, layer=layer)) == requests
    assert _cards(inner) == _cards(hot)


@pytest.mark.parametrize(
    ("layer", "keyed"), [("command", True), ("unit", False), ("transaction", False)]
)
def test_of_the_layers_inside_http_only_command_records_a_key_a_request(
    fresh_database: FreshDatabase, layer: Layer, keyed: bool
) -> None:
    played, warmed_up = fresh_database(), fresh_database()
    with pinned_seeds():
        requests = asyncio.run(play(played, HANDS, layer=layer))
        asyncio.run(play(warmed_up, 0, layer=layer))  # the setup's and warm-up's keys alone
    expected = _keys_recorded(warmed_up) + (requests if keyed else 0)
    assert _keys_recorded(played) == expected


def test_the_transaction_layer_deals_no_hand_and_counts_one_unit_a_hand(
    fresh_database: FreshDatabase,
) -> None:
    url = fresh_database()
    with pinned_seeds():
        assert asyncio.run(play(url, HANDS, layer="transaction")) == HANDS
    assert len(_cards(url)) == WARM_UP_HANDS


@pytest.mark.parametrize("layer", ["command", "unit", "transaction"])
def test_the_inner_layers_run_each_request_where_idempotency_runs_its_units(
    fresh_database: FreshDatabase, layer: Layer, monkeypatch: pytest.MonkeyPatch
) -> None:
    run_units = Database.run_units
    calls = 0

    async def counted(self: Database, work: Callable[[], object]) -> object:
        nonlocal calls
        calls += 1
        return await run_units(self, work)

    monkeypatch.setattr(Database, "run_units", counted)
    with pinned_seeds():
        asyncio.run(play(fresh_database(), 0, layer=layer))  # the setup and the warm-up
        before_the_layer, calls = calls, 0
        requests = asyncio.run(play(fresh_database(), HANDS, layer=layer))
    assert calls - before_the_layer == requests


def test_the_count_on_postgresql_names_no_server_on_its_command_line(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    commands: list[list[str]] = []

    def counted(command: list[str]) -> int:
        commands.append(command)
        return 0

    monkeypatch.setattr(hand_instructions, "count_instructions", counted)
    hand_instructions.count(5, layer="unit", postgres=True)
    [command] = commands
    assert "--postgres" in command
    assert not any("postgresql" in part for part in command)


@pytest.mark.parametrize("sizes", [["--small", "5", "--large", "5"], ["--small", "0"]])
def test_sizes_that_cannot_give_a_cost_per_hand_are_refused(sizes: list[str]) -> None:
    with pytest.raises(SystemExit):
        main(sizes)
