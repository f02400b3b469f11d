"""The prototypes of `benchmarks.lean_hand` and `benchmarks.bare_hand` measure the hand path
only if they do the hand's work: on a database the service set up, each places hands and
decides ties itself, and every hand passes `casino-war audit`, which replays each from its
seeds and holds the ledger to it."""

import os
import subprocess
import sys
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import replace

import pytest

from benchmarks import bare_hand, http_load, lean_hand, servers
from benchmarks.lean_hand import prepared
from benchmarks.plan import TINY
from ledger.database import make_engine


def _hands_and_wars(database_url: str) -> tuple[int, int]:
    engine = make_engine(database_url)
    try:
        with engine.connect() as connection:
            query = "SELECT COUNT(*), COUNT(*) FILTER (WHERE decision = 'war') FROM hands"
            row = connection.exec_driver_sql(query).one()
    finally:
        engine.dispose()
    return int(row[0]), int(row[1])


Serving = Callable[[str], AbstractContextManager[servers.Server]]


@pytest.mark.parametrize(
    ("serving", "database_url"),
    [
        pytest.param(lean_hand.serving, "sqlite", id="lean-sqlite"),
        pytest.param(bare_hand.serving, "sqlite", id="bare-sqlite"),
        pytest.param(bare_hand.serving, "postgresql", id="bare-postgresql"),
    ],
    indirect=["database_url"],
)
def test_the_prototype_plays_hands_and_wars_that_pass_the_audit(
    serving: Serving, database_url: str
) -> None:
    service = prepared(database_url, TINY)
    hands_before, wars_before = _hands_and_wars(database_url)
    with serving(database_url) as server:
        point = http_load.hands_point(
            replace(service, base_url=server.base_url), replace(TINY, duration_seconds=3.0), 2
        )
    hands_after, wars_after = _hands_and_wars(database_url)
    assert point["errors"] == 0, point["first_error"]
    assert hands_after - hands_before >= point["hands_per_second"] * 3.0 * 0.9
    assert wars_after > wars_before
    audit = subprocess.run(
        [sys.executable, "-m", "api.cli", "audit"],
        env={**os.environ, "CASINO_WAR_DATABASE_URL": database_url},
        cwd=servers.ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert audit.returncode == 0, audit.stdout + audit.stderr
    assert "audit: clean" in audit.stdout
