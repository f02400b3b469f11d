"""The period audit spread over worker processes by hand-id range: the serial audit's result
exactly (counts, and mismatches in the same order), progress as chunks complete, the same
date range, and the command line's `--jobs`."""

import json
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

import pytest
from freezegun import freeze_time
from sqlalchemy import func, select

from api.cli import main
from api.db.database import Database
from api.db.models import hands_table
from api.db.snapshot import read_snapshot
from api.domain.audit.batch import audit_hands
from api.domain.audit.parallel import audit_hands_parallel
from api.domain.audit.results import HandAuditResult
from tests.audit.support import (
    execute,
    new_player,
    play_settled,
    stake_wallet_entry,
    use_database,
)
from tests.ledger.tampering import drop_ledger_triggers

# Hands per chunk: the `played` day (some 70 hands) makes several chunks for two workers.
CHUNK = 10


def _comparable(result: HandAuditResult) -> HandAuditResult:
    """The result without timing and the processes used: what must not depend on them."""
    return replace(result, seconds=0.0, jobs=1)


def _serial_and_parallel(
    database: Database, start: datetime | None = None, end: datetime | None = None
) -> tuple[HandAuditResult, HandAuditResult]:
    with read_snapshot(database.engine) as connection:
        serial = audit_hands(connection, start, end)
        parallel = audit_hands_parallel(connection, start, end, jobs=2, chunk=CHUNK)
    assert parallel.jobs == 2  # the pool ran: several chunks
    return serial, parallel


@pytest.mark.usefixtures("played")
def test_parallel_audit_of_clean_data_equals_the_serial_audit(database: Database) -> None:
    serial, parallel = _serial_and_parallel(database)
    assert parallel.ok
    assert parallel.hands_checked > 3 * CHUNK
    assert _comparable(parallel) == _comparable(serial)


def test_parallel_audit_names_tampered_hands_exactly_as_the_serial_audit(
    database: Database, played: dict[str, Any]
) -> None:
    settled = played["settled"]
    card, amount, entry, deleted = settled[1], settled[12], settled[20], settled[25]
    other = "2C" if card.player_card != "2C" else "3C"
    execute(
        database.engine, "UPDATE hands SET player_card = :c WHERE id = :id", c=other, id=card.id
    )
    execute(database.engine, "UPDATE hands SET net = net + 500 WHERE id = :id", id=amount.id)
    execute(database.engine, "DELETE FROM hands WHERE id = :id", id=deleted.id)
    drop_ledger_triggers(database.engine)
    execute(
        database.engine,
        "UPDATE ledger_entries SET amount = amount + 100 WHERE id = :id",
        id=stake_wallet_entry(database.engine, entry.id)[1],
    )
    serial, parallel = _serial_and_parallel(database)
    assert [m.hand_id for m in parallel.mismatches] == [card.id, amount.id, entry.id]
    assert _comparable(parallel) == _comparable(serial)


@pytest.mark.usefixtures("played")
def test_parallel_audit_reports_the_running_total_as_chunks_complete(
    database: Database,
) -> None:
    seen: list[int] = []
    with read_snapshot(database.engine) as connection:
        result = audit_hands_parallel(connection, jobs=2, chunk=CHUNK, on_progress=seen.append)
    assert len(seen) > 3
    assert seen == sorted(seen)
    assert seen[-1] == result.hands_checked


@pytest.mark.usefixtures("played")
def test_a_period_of_at_most_one_chunk_is_replayed_in_process(database: Database) -> None:
    with read_snapshot(database.engine) as connection:
        total = connection.execute(select(func.count()).select_from(hands_table)).scalar_one()
        result = audit_hands_parallel(connection, jobs=2, chunk=total)
    assert result.jobs == 1
    assert result.hands_checked == total


def test_a_date_range_restricts_the_parallel_audit_as_it_does_the_serial_one(
    database: Database,
) -> None:
    player = new_player(database)
    for day, hands in ((1, 8), (2, 30), (3, 8)):
        with freeze_time(datetime(2026, 5, day, 12, tzinfo=UTC)):
            for _ in range(hands):
                play_settled(database, player)
    start, end = datetime(2026, 5, 2, tzinfo=UTC), datetime(2026, 5, 3, tzinfo=UTC)
    serial, parallel = _serial_and_parallel(database, start, end)
    assert parallel.hands_checked == 30
    assert _comparable(parallel) == _comparable(serial)


def test_parallel_workers_on_postgresql_read_the_coordinators_snapshot(
    database: Database, played: dict[str, Any]
) -> None:
    if not database.is_postgresql:
        pytest.skip("SQLite cannot share a snapshot between connections")
    hand = played["settled"][3]
    with read_snapshot(database.engine) as connection:
        connection.execute(select(func.count()).select_from(hands_table)).scalar_one()
        # Changed after the coordinator's snapshot was taken: neither it nor its workers see it.
        execute(database.engine, "UPDATE hands SET net = net + 1 WHERE id = :id", id=hand.id)
        result = audit_hands_parallel(connection, jobs=2, chunk=CHUNK)
    assert result.jobs == 2
    assert result.ok, result.mismatches


def test_cli_audit_with_two_jobs_exits_1_naming_the_tampered_hand(
    database: Database,
    database_url: str,
    played: dict[str, Any],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    hand = played["settled"][17]
    execute(database.engine, "UPDATE hands SET net = net + 500 WHERE id = :id", id=hand.id)
    use_database(monkeypatch, database_url)
    status = main(["audit", "--json", "--jobs", "2", "--chunk", str(CHUNK)])
    captured = capsys.readouterr()
    assert status == 1, captured.err
    document = json.loads(captured.out)
    assert document["hands"]["jobs"] == 2
    assert [m["hand_id"] for m in document["hands"]["mismatches"]] == [hand.id]
