"""`python -m benchmarks.drivers` loads the same units of work waiting on their database each
way (on the loop, in a worker thread, on an asynchronous driver) and reports what each costs
the process; no timing asserted."""

import sqlite3
from collections.abc import Iterator

import psycopg
import pytest
from sqlalchemy import make_url

from benchmarks import scratch
from benchmarks.drivers import VARIANTS, Shape, measure
from tests.benchmarks.postgres import postgres_server

TINY_UNIT = Shape(statements=5, python_seconds=0.00001)
"""BEGIN, the row locked, an update, an insert into the log, COMMIT."""


@pytest.fixture(params=["sqlite", "postgresql"])
def database(request: pytest.FixtureRequest) -> Iterator[tuple[str, str]]:
    kind: str = request.param
    postgres = postgres_server() if kind == "postgresql" else None
    with scratch.scratch_database(kind, postgres, "drivers-test") as url:
        yield kind, url


def _logged_rows(kind: str, url: str) -> int:
    query = "SELECT count(*) FROM bench_log"
    if kind == "sqlite":
        connection = sqlite3.connect(make_url(url).database or "")
        try:
            return int(connection.execute(query).fetchone()[0])
        finally:
            connection.close()
    conninfo = make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)
    with psycopg.connect(conninfo) as server:
        row = server.execute(query).fetchone()
        assert row is not None
        return int(row[0])


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
            # SQLite works inside the measured process; PostgreSQL in processes of its own.
            assert (variant["database_cpu_ms_per_unit"] is None) is (kind == "sqlite")
    served = "thread" if kind == "postgresql" else "loop"
    assert result["served_with"] == served
    assert result["process_cpu_vs_served"][served] == 1.0
    assert result["python_ms_per_unit"] == pytest.approx(0.03)


def test_every_unit_counted_committed_its_writes(database: tuple[str, str]) -> None:
    kind, url = database
    result = measure(kind, url, shape=TINY_UNIT, callers=2, rounds=1, warmup=0.05, seconds=0.2)
    counted = sum(variant["units"] for variant in result["rounds"][0].values())
    # One insert a unit; units also ran, uncounted, in each warm-up.
    assert _logged_rows(kind, url) >= counted > 0
