"""The floor under a SQLite hand: the prototype's statements replayed on a bare connection."""

from benchmarks import sqlite_floor


def test_the_floor_is_replayed_faithfully_and_set_beside_a_do_nothing_request() -> None:
    measured = sqlite_floor.measure(hands=30, seconds=0.3)
    assert measured["hands"] == 30
    assert measured["statements_per_hand"] > 10  # BEGIN, the locks, the reads, the writes
    assert measured["floor_cpu_ms_per_hand"] > 0
    assert measured["floor_vs_noop"] > 0 and measured["goal_vs_noop"] == 4


def test_a_setting_is_weighed_against_the_services_round_after_round() -> None:
    measured = sqlite_floor.measure(
        hands=30, seconds=0.3, pragmas=["wal_autocheckpoint=10000"], rounds=2
    )
    weighed = measured["with_pragmas"]
    assert weighed["pragmas"] == ["wal_autocheckpoint=10000"]
    assert all(len(rounds) == 2 for rounds in weighed["rounds_ms"].values())
    assert weighed["floor_cpu_ms_per_hand"] > 0 and weighed["against_as_served"] > 0
