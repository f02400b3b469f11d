"""`python -m benchmarks.pool` loads the service once per pool size, every round, and reports
the connections PostgreSQL saw opened beside the throughput and CPU; no timing asserted.

PostgreSQL only: connection churn is what it measures, and a SQLite connection is a file
handle, not a server process."""

from dataclasses import replace

from benchmarks.plan import TINY
from benchmarks.pool import measure
from tests.benchmarks.postgres import postgres_server

PLAN = replace(TINY, clients=(2,))


def test_each_pool_size_is_measured_every_round_with_the_connections_it_opened() -> None:
    result = measure(postgres_server(), PLAN, [2, 4], rounds=2)
    assert set(result["per_round"]) == {"2", "4"}
    for rows in result["per_round"].values():
        assert len(rows) == 2
        for row in rows:
            assert row["connections_opened"] >= 0
            assert row["hands_per_second"] > 0
            assert row["server_cpu_ms_per_hand"] > 0
    assert set(result["median"]["4"]) == set(result["per_round"]["4"][0])
