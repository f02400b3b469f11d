"""The floor under a SQLite hand: the prototype's statements replayed on a bare connection."""

import sqlite3
import struct
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from benchmarks import sqlite_floor


def test_the_floor_is_replayed_faithfully_and_set_beside_a_do_nothing_request() -> None:
    measured = sqlite_floor.measure(hands=30, seconds=0.3)
    assert measured["hands"] == 30
    assert measured["statements_per_hand"] > 10  # BEGIN, the locks, the reads, the writes
    assert measured["floor_cpu_ms_per_hand"] > 0
    assert measured["floor_vs_noop"] > 0 and measured["goal_vs_noop"] == 4


def test_a_setting_is_weighed_against_the_services_round_after_round() -> None:
    change = sqlite_floor.Change(pragmas=("wal_autocheckpoint=10000",))
    measured = sqlite_floor.measure(hands=30, seconds=0.3, change=change, rounds=2)
    weighed = measured["changed"]
    assert weighed["pragmas"] == ["wal_autocheckpoint=10000"]
    assert all(len(rounds) == 2 for rounds in weighed["rounds_ms"].values())
    assert weighed["floor_cpu_ms_per_hand"] > 0 and weighed["against_as_served"] > 0


def test_writing_without_an_index_is_weighed_against_the_schema_as_it_is() -> None:
    change = sqlite_floor.Change(dropped_indexes=("ix_ledger_transactions_reference",))
    measured = sqlite_floor.measure(hands=30, seconds=0.3, change=change)
    weighed = measured["changed"]
    assert weighed["dropped_indexes"] == ["ix_ledger_transactions_reference"]
    assert weighed["floor_cpu_ms_per_hand"] > 0 and weighed["against_as_served"] > 0


def test_an_index_that_backs_a_constraint_is_refused() -> None:
    change = sqlite_floor.Change(dropped_indexes=("sqlite_autoindex_hands_1",))
    with pytest.raises(ValueError, match="sqlite_autoindex_hands_1"):
        sqlite_floor.measure(hands=30, seconds=0.3, change=change)


@pytest.fixture(scope="module")
def pages_without_the_readers_indexes() -> dict[str, Any]:
    """The page census of one measurement, as served and without the indexes that only
    readers need."""
    readers_only = sqlite_floor.Change(dropped_indexes=sqlite_floor.READERS_ONLY_INDEXES)
    measured = sqlite_floor.measure(hands=30, seconds=0.3, change=readers_only)
    return {
        "as_served": measured["wal_pages_per_hand"],
        "without": measured["changed"]["wal_pages_per_hand"],
    }


def test_each_table_a_hand_writes_a_row_to_has_its_pages_counted(
    pages_without_the_readers_indexes: dict[str, Any],
) -> None:
    """Counted, not a page a hand each: the set-up's hands, played by concurrent clients,
    can leave a few free pages (B-tree pages merged as rows are rewritten, more or fewer
    with the host's load), and a page a table takes from them counts as a free one."""
    by_object = pages_without_the_readers_indexes["as_served"]["by_object"]
    for table in ("hands", "ledger_transactions", "ledger_entries", "idempotency_records"):
        assert by_object[table] > 0


def test_a_constraints_own_index_is_named_with_its_table_and_columns(
    pages_without_the_readers_indexes: dict[str, Any],
) -> None:
    by_object = pages_without_the_readers_indexes["as_served"]["by_object"]
    assert any(label.endswith("(ledger_transactions: seq)") for label in by_object)


def test_the_indexes_dropped_write_no_page(
    pages_without_the_readers_indexes: dict[str, Any],
) -> None:
    assert pages_without_the_readers_indexes["as_served"]["readers_only_indexes"] > 0
    assert pages_without_the_readers_indexes["without"]["readers_only_indexes"] == 0


def test_a_hand_saves_about_the_pages_the_dropped_indexes_wrote(
    pages_without_the_readers_indexes: dict[str, Any],
) -> None:
    """A little less: the hand's new pages come from the free list the indexes left, whose
    own pages are written too."""
    as_served, without = (
        pages_without_the_readers_indexes["as_served"],
        pages_without_the_readers_indexes["without"],
    )
    dropped = as_served["readers_only_indexes"]
    assert 0.75 * dropped <= as_served["total"] - without["total"] <= dropped + 0.1


def test_the_pages_a_dropped_index_left_free_are_counted_apart(
    pages_without_the_readers_indexes: dict[str, Any],
) -> None:
    """More than the few the set-up's hands may leave free in the database as served."""
    as_served, without = (
        pages_without_the_readers_indexes["as_served"]["by_object"],
        pages_without_the_readers_indexes["without"]["by_object"],
    )
    assert without[sqlite_floor.FREE_BEFORE] > as_served.get(sqlite_floor.FREE_BEFORE, 0)


def _small_database(path: Path, rows: int) -> Path:
    """A file with one table of `rows` rows and an index on its one column."""
    with closing(sqlite3.connect(path)) as connection:
        connection.execute("CREATE TABLE t (v TEXT)")
        connection.execute("CREATE INDEX ix_t_v ON t (v)")
        connection.executemany("INSERT INTO t VALUES (?)", ((f"{n:0200}",) for n in range(rows)))
        connection.commit()
    return path


def _recording(*statements: str) -> sqlite_floor.Recording:
    return sqlite_floor.Recording(statements=[(statement, ()) for statement in statements])


def test_a_commits_pages_are_counted_by_the_table_or_index_each_belongs_to(tmp_path: Path) -> None:
    database = _small_database(tmp_path / "small.db", rows=1)
    recording = _recording("INSERT INTO t VALUES ('x')", sqlite_floor.COMMIT)
    assert sqlite_floor.wal_pages(database, recording) == {"t": 1, "ix_t_v (t: v)": 1}


def test_a_replay_that_frees_pages_is_refused(tmp_path: Path) -> None:
    """A page freed would be counted under its owner at the end, which it no longer has."""
    database = _small_database(tmp_path / "small.db", rows=200)
    recording = _recording("DELETE FROM t", sqlite_floor.COMMIT)
    with pytest.raises(RuntimeError, match="freed or moved"):
        sqlite_floor.wal_pages(database, recording)


def _wal(frames: list[tuple[int, int, bytes]], page_size: int = 512) -> bytes:
    """A WAL file: its header with the salts `b"SALTSALT"`, then frames of (page, commit
    size, salts) and an empty page each."""
    header = struct.pack(">IIII", 0x377F0682, 3007000, page_size, 0) + b"SALTSALT" + bytes(8)
    body = b"".join(
        struct.pack(">II", page, commit_size) + salts + bytes(8) + bytes(page_size)
        for page, commit_size, salts in frames
    )
    return header + body


def test_the_frames_of_committed_transactions_are_read_in_order() -> None:
    wal = _wal([(5, 0, b"SALTSALT"), (1, 9, b"SALTSALT"), (7, 0, b"SALTSALT"), (2, 9, b"SALTSALT")])
    assert sqlite_floor.committed_frames(wal) == [5, 1, 7, 2]


def test_frames_after_the_last_commit_are_not_read() -> None:
    wal = _wal([(5, 0, b"SALTSALT"), (1, 9, b"SALTSALT"), (7, 0, b"SALTSALT")])
    assert sqlite_floor.committed_frames(wal) == [5, 1]


def test_frames_left_from_before_the_log_was_reset_are_not_read() -> None:
    wal = _wal([(5, 9, b"SALTSALT"), (6, 9, b"OLDSALTS")])
    assert sqlite_floor.committed_frames(wal) == [5]


def test_a_frame_cut_short_is_not_read() -> None:
    wal = _wal([(5, 9, b"SALTSALT"), (6, 9, b"SALTSALT")])
    assert sqlite_floor.committed_frames(wal[:-1]) == [5]


def test_a_log_without_frames_has_none() -> None:
    assert sqlite_floor.committed_frames(b"") == []
    assert sqlite_floor.committed_frames(_wal([])) == []
