"""The floor under a SQLite hand: the prototype's statements replayed on a bare connection."""

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
    pages = sqlite_floor.measure(hands=30, seconds=0.3)["wal_pages_per_hand"]
    by_object = pages["by_object"]
    assert pages["total"] == pytest.approx(sum(by_object.values()), abs=0.05)
    for table in ("hands", "ledger_transactions", "ledger_entries", "idempotency_records"):
        assert by_object[table] >= 1  # every hand writes a row to each, so a page of each
    # A constraint's own index is named with its table and columns, not only its number.
    assert any(label.endswith("(ledger_transactions: hash)") for label in by_object)
    readers_only = sum(
        count
        for label, count in by_object.items()
        if label.split(" (")[0] in sqlite_floor.READERS_ONLY_INDEXES
    )
    assert readers_only > 0
    assert pages["readers_only_indexes"] == pytest.approx(readers_only, abs=0.05)


def test_an_index_dropped_writes_no_page() -> None:
    change = sqlite_floor.Change(dropped_indexes=("ix_hands_table_id",))
    measured = sqlite_floor.measure(hands=30, seconds=0.3, change=change)
    as_served = measured["wal_pages_per_hand"]["by_object"]
    changed = measured["changed"]["wal_pages_per_hand"]["by_object"]
    assert any(label.startswith("ix_hands_table_id ") for label in as_served)
    assert not any(label.startswith("ix_hands_table_id ") for label in changed)
