"""The floor under a SQLite hand: the prototype's statements replayed on a bare connection."""

import struct

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


def test_the_pages_a_hand_writes_to_the_wal_are_counted_by_table_and_index() -> None:
    readers_only = sqlite_floor.Change(dropped_indexes=sqlite_floor.READERS_ONLY_INDEXES)
    measured = sqlite_floor.measure(hands=30, seconds=0.3, change=readers_only)
    as_served = measured["wal_pages_per_hand"]
    without = measured["changed"]["wal_pages_per_hand"]
    for table in ("hands", "ledger_transactions", "ledger_entries", "idempotency_records"):
        assert as_served["by_object"][table] >= 1  # a hand writes a row to each
    # A constraint's own index is named with its table and columns, not only its number.
    assert any(label.endswith("(ledger_transactions: hash)") for label in as_served["by_object"])
    # The indexes dropped write nothing, and the hand saves about what they wrote: a little
    # less, as its new pages come from the free list they left, which is written too.
    assert without["readers_only_indexes"] == 0
    dropped = as_served["readers_only_indexes"]
    saved = as_served["total"] - without["total"]
    assert dropped > 0 and 0.75 * dropped <= saved <= dropped + 0.1
    assert without["by_object"][sqlite_floor.FREE_BEFORE] > 0


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
