"""`python -m benchmarks.thread_hop` prices a hop to a worker thread each way the service could
make it; no timing asserted."""

import pytest

from benchmarks.thread_hop import measure


def test_each_way_is_priced_every_round_with_the_executors_ratio_to_anyio() -> None:
    result = measure(hops=80, callers=8, rounds=2)
    assert set(result["cpu_us_per_call"]) == {"anyio", "executor", "loop"}
    assert all(len(rounds) == 2 for rounds in result["cpu_us_per_call"].values())
    assert all(value >= 0 for value in result["median_cpu_us_per_call"].values())
    assert isinstance(result["executor_vs_anyio"], float)


def test_fewer_hops_than_callers_are_refused() -> None:
    with pytest.raises(ValueError, match="cannot be shared"):
        measure(hops=4, callers=8, rounds=1)
