"""`python -m benchmarks.hot_path` measures both variants and the do-nothing endpoint on each
database, every round, and reports their ratios; no timing asserted."""

from dataclasses import replace

import pytest

from benchmarks import bare_hand, servers
from benchmarks.hot_path import Prototype, main, measure, round_order, service_env
from benchmarks.plan import TINY
from tests.benchmarks.postgres import postgres_server

PLAN = replace(TINY, history_clients=2)


@pytest.mark.parametrize("database", ["sqlite", "postgresql"])
def test_each_variant_is_measured_every_round_with_its_ratios_and_rates(database: str) -> None:
    postgres = postgres_server() if database == "postgresql" else None
    result = measure(database, postgres, PLAN, rounds=2)
    variants = {"hot_path", "framework", "noop", "bare"}
    if database == "sqlite":
        variants |= {"prototype", "grouped", "unindexed"}  # lean_hand; bare_hand --grouped
    else:
        variants |= {"combined", "optimistic", "exchanged"}  # bare_hand's PostgreSQL shapes
    assert set(result["server_cpu_ms"]) == variants
    assert all(len(values) == 2 for values in result["server_cpu_ms"].values())
    for ratio in ("hot_path_vs_framework", "hot_path_vs_noop", "framework_vs_noop"):
        assert result[ratio] is None or result[ratio] > 0
    assert result["bare_vs_noop"] > 0
    if database == "sqlite":
        assert result["prototype_vs_noop"] > 0 and result["unindexed_vs_noop"] > 0
    assert all(rate > 0 for rate in result["median_units_per_second"].values())
    threads = result["median_thread_cpu_ms"]  # the server's CPU: its event loops, the rest
    assert set(threads) == variants
    assert all(set(kinds) == {"event_loops", "worker_threads"} for kinds in threads.values())
    assert threads["hot_path"]["event_loops"] > 0  # the requests, and on PostgreSQL the units
    if database == "postgresql":  # the database's CPU per hand beside the server's
        assert set(result["postgresql_cpu_ms"]) == variants - {"noop"}
        assert all(cpu_ms > 0 for cpu_ms in result["median_postgresql_cpu_ms"].values())
    else:
        assert result["postgresql_cpu_ms"] is None


def test_a_baseline_checkout_is_loaded_beside_this_one_with_its_ratios() -> None:
    """This checkout as its own baseline: any checkout with a `.venv` of its own will do."""
    if not (servers.ROOT / ".venv" / "bin" / "casino-war").exists():
        pytest.skip("this checkout has no .venv of its own to serve as a baseline")
    result = measure(
        "sqlite", None, PLAN, rounds=1, baseline=servers.ROOT, only=["hot_path", "baseline"]
    )
    assert len(result["server_cpu_ms"]["baseline"]) == 1
    assert result["hot_path_vs_baseline"] > 0 and result["baseline_vs_noop"] > 0


def test_indexes_are_dropped_from_a_sqlite_prototype_only() -> None:
    with pytest.raises(ValueError, match="SQLite"):
        Prototype(bare_hand.serving, ("postgresql",), dropped_indexes=("ix_hands_table_id",))


def test_a_token_cache_given_reaches_the_services_settings() -> None:
    env = service_env("sqlite:///x.db", "true", token_cache_seconds=0.001)
    assert env["CASINO_WAR_TOKEN_CACHE_SECONDS"] == "0.001"
    assert "CASINO_WAR_TOKEN_CACHE_SECONDS" not in service_env("sqlite:///x.db", "true")


@pytest.mark.parametrize("seconds", ["0", "3601"])
def test_a_token_cache_the_service_would_refuse_is_refused_before_any_server_starts(
    seconds: str,
) -> None:
    with pytest.raises(SystemExit):
        main(["--token-cache-seconds", seconds])


def test_every_server_is_loaded_once_a_round() -> None:
    names = ("hot_path", "framework", "baseline", "noop")
    assert all(sorted(round_order(names, index)) == sorted(names) for index in range(8))


def test_the_second_round_of_each_pair_loads_the_servers_in_reverse() -> None:
    names = ("hot_path", "framework", "baseline", "noop")
    for first in range(0, 8, 2):
        assert round_order(names, first + 1) == round_order(names, first)[::-1]


def test_each_server_opens_a_pair_of_rounds_in_its_turn() -> None:
    names = ("hot_path", "framework", "baseline", "noop")
    openers = [round_order(names, first)[0] for first in range(0, 2 * len(names), 2)]
    assert openers == list(names)


def test_only_the_servers_asked_for_are_loaded_beside_the_do_nothing_endpoint() -> None:
    result = measure("sqlite", None, PLAN, rounds=1, only=["hot_path"])
    assert set(result["server_cpu_ms"]) == {"hot_path", "noop"}
    assert result["hot_path_vs_noop"] > 0
    assert result["hot_path_vs_framework"] is None


def test_a_server_it_cannot_load_is_refused_before_any_server_starts() -> None:
    with pytest.raises(SystemExit):
        main(["--only", "nonesuch"])


def test_a_baseline_named_without_a_checkout_is_refused_before_any_server_starts() -> None:
    with pytest.raises(SystemExit):
        main(["--only", "hot_path", "baseline"])
