"""The instruction-count diagnostic: callgrind's count read back, the marginal cost per hand,
and the audit it counts."""

import shutil
import subprocess
import sys

import pytest

from api.db.database import Database
from benchmarks.audit_bench import HandFactory
from benchmarks.audit_once import audit_first_hands
from benchmarks.instructions import ROOT, count_audit, count_instructions, per_unit
from benchmarks.plan import FULL

needs_valgrind = pytest.mark.skipif(shutil.which("valgrind") is None, reason="needs valgrind")


def test_the_cost_per_unit_is_the_runs_difference_over_their_difference_in_units() -> None:
    assert per_unit((1_000, 5_000_000), (3_000, 5_600_000)) == 300


def test_two_runs_that_do_not_grow_give_no_cost_per_unit() -> None:
    with pytest.raises(ValueError, match="more units"):
        per_unit((3_000, 1), (3_000, 2))


@needs_valgrind
def test_callgrind_counts_the_instructions_of_a_whole_command() -> None:
    idle = count_instructions([sys.executable, "-c", "pass"])
    busy = count_instructions([sys.executable, "-c", "sum(range(100_000))"])
    assert 0 < idle < busy


@needs_valgrind
def test_a_command_that_fails_under_valgrind_is_reported_not_counted() -> None:
    with pytest.raises(RuntimeError, match="failed under valgrind"):
        count_instructions([sys.executable, "-c", "raise SystemExit(3)"])


def test_the_counted_audit_checks_exactly_the_first_hands(database_url: str) -> None:
    database = Database.connect(database_url)
    try:
        HandFactory(database, FULL).grow_to(30)
    finally:
        database.dispose()
    assert audit_first_hands(database_url, 20) == 20


def test_a_database_with_fewer_hands_than_asked_is_refused_rather_than_counted(
    database_url: str,
) -> None:
    database = Database.connect(database_url)
    try:
        HandFactory(database, FULL).grow_to(10)
    finally:
        database.dispose()
    finished = subprocess.run(
        [sys.executable, "-m", "benchmarks.audit_once", database_url, "20"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert finished.returncode != 0
    assert "holds 10 hands, not 20" in finished.stderr


@needs_valgrind
@pytest.mark.slow
def test_counting_the_audit_gives_the_cost_of_one_more_hand(database_url: str) -> None:
    database = Database.connect(database_url)
    try:
        HandFactory(database, FULL).grow_to(3)
    finally:
        database.dispose()
    counted = count_audit(database_url, 1)
    smaller, larger = counted["instructions"]["1"], counted["instructions"]["3"]
    assert 0 < smaller < larger
    assert counted["instructions_per_hand"] == round((larger - smaller) / 2)
