"""The prototypes of `benchmarks.lean_hand` and `benchmarks.bare_hand` measure the hand path
only if they do the hand's work: on a database the service set up, each places hands and
decides ties itself, and every hand passes `casino-war audit`, which replays each from its
seeds and holds the ledger to it."""

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from contextlib import AbstractContextManager, closing
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from freezegun import freeze_time

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
        pytest.param(
            partial(bare_hand.serving, combined=True), "postgresql", id="combined-postgresql"
        ),
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


_TABLES = (
    "hands",
    "seed_pairs",
    "ledger_accounts",
    "ledger_transactions",
    "ledger_entries",
    "ledger_chain_head",
    "idempotency_records",
)


def _settled_copies(source: Path, *names: str) -> list[Path]:
    with closing(sqlite3.connect(source)) as connection:
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    copies = [source.with_name(name) for name in names]
    for copy in copies:
        shutil.copyfile(source, copy)
    return copies


def _rows(database: Path) -> dict[str, list[tuple[object, ...]]]:
    with closing(sqlite3.connect(database)) as connection:
        return {
            table: connection.execute(f"SELECT * FROM {table} ORDER BY 1").fetchall()
            for table in _TABLES
        }


def _play(prototype: Any, tokens: list[str], table_id: int, hands: int) -> None:
    for number in range(hands):
        token = tokens[number % len(tokens)]
        body = {"table_id": table_id, "bet": 100}
        status, answer = prototype.run(token, f"h{number}", "/v1/hands", body)
        assert status == 201, answer
        hand = json.loads(answer)
        if hand["status"] == "awaiting_decision":
            path = f"/v1/hands/{hand['id']}/decision"
            prototype.run(token, f"w{number}", path, {"action": "war"})


def test_the_bare_prototype_writes_the_rows_the_lean_one_writes(tmp_path: Path) -> None:
    source = tmp_path / "prepared.db"
    service = prepared(f"sqlite:///{source}", TINY)
    lean_copy, bare_copy = _settled_copies(source, "lean.db", "bare.db")
    tokens = [player.token for player in service.players]
    lean_engine = make_engine(f"sqlite:///{lean_copy}")
    bare_engine = make_engine(f"sqlite:///{bare_copy}")
    try:
        with freeze_time("2026-11-25 12:00:00"), lean_engine.connect() as connection:
            _play(lean_hand.LeanHands(connection), tokens, service.table_id, 200)
            pooled = bare_engine.raw_connection()
            bare = bare_hand.BareHands(bare_hand.Bare(pooled.driver_connection, postgresql=False))
            _play(bare, tokens, service.table_id, 200)
            pooled.close()
    finally:
        lean_engine.dispose()
        bare_engine.dispose()
    lean_rows, bare_rows = _rows(lean_copy), _rows(bare_copy)
    assert len(lean_rows["hands"]) > 200  # the new hands are there, wars among them
    assert any(row for row in lean_rows["hands"] if "war" in row)
    for table in _TABLES:
        assert bare_rows[table] == lean_rows[table], table
