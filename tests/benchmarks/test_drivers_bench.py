"""`python -m benchmarks.drivers` loads the same units of work waiting on their database each
way (on the loop, in a worker thread, on an asynchronous driver) and reports what each costs
the process; no timing asserted."""

import os
from collections.abc import Iterator

import pytest

from benchmarks import scratch
from benchmarks.drivers import VARIANTS, Shape, measure

TINY_UNIT = Shape(statements=5, python_seconds=0.00001)


@pytest.fixture(params=["sqlite", "postgresql"])
def database(request: pytest.FixtureRequest) -> Iterator[tuple[str, str]]:
    kind: str = request.param
    postgres = None
    if kind == "postgresql":
        url = os.environ.get("CASINO_WAR_TEST_POSTGRES_URL")
        if not url:
            pytest.skip("PostgreSQL tests need CASINO_WAR_TEST_POSTGRES_URL")
        postgres, reason = scratch.find_postgres(url)
        assert postgres is not None, reason
    with scratch.scratch_database(kind, postgres, "drivers-test") as url:
        yield kind, url


def test_every_variant_is_measured_every_round_against_the_one_the_service_runs(
    database: tuple[str, str],
) -> None:
    kind, url = database
    result = measure(kind, url, shape=TINY_UNIT, callers=3, rounds=2, warmup=0.05, seconds=0.3)
    assert len(result["rounds"]) == 2
    for figures in result["rounds"]:
        assert set(figures) == set(VARIANTS[kind])
        for variant in figures.values():
            assert variant["units"] > 0
            assert variant["process_cpu_ms_per_unit"] > 0
    served = "thread" if kind == "postgresql" else "loop"
    assert result["served_with"] == served
    assert result["process_cpu_vs_served"][served] == 1.0
    assert result["python_ms_per_unit"] == pytest.approx(0.03)
