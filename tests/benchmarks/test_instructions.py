"""The instruction-count diagnostic: callgrind's count read back, the cost of one more hand,
the counted audit and the database it counts."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from sqlalchemy import create_engine

from api.db.database import Database
from api.domain.audit.reads import count_hands
from benchmarks.audit_bench import HandFactory
from benchmarks.audit_once import audit_first_hands
from benchmarks.instructions import ROOT, count_audit, count_instructions, per_unit, prepared
from benchmarks.plan import FULL

needs_valgrind = pytest.mark.skipif(shutil.which("valgrind") is None, reason="needs valgrind")


def _grow(url: str, hands: int) -> None:
    database = Database.connect(url)
    try:
        HandFactory(database, FULL).grow_to(hands)
    finally:
        database.dispose()


def _hands_in(url: str) -> int:
    engine = create_engine(url)
    try:
        with engine.connect() as connection:
            return count_hands(connection, None, None)
    finally:
        engine.dispose()


def test_the_cost_per_unit_is_the_runs_difference_over_their_difference_in_units() -> None:
    assert per_unit((1_000, 5_000_000), (3_000, 5_600_000)) == 300


def test_two_runs_that_do_not_grow_give_no_cost_per_unit() -> None:
    with pytest.raises(ValueError, match="more units"):
        per_unit((3_000, 1), (3_000, 2))


def test_an_audit_of_no_hands_is_not_counted() -> None:
    with pytest.raises(ValueError, match="positive"):
        count_audit("sqlite:///never-opened.db", 0)


@needs_valgrind
def test_callgrind_counts_the_instructions_of_a_whole_command() -> None:
    idle = count_instructions([sys.executable, "-c", "pass"])
    busy = count_instructions([sys.executable, "-c", "sum(range(100_000))"])
    assert 0 < idle < busy


@needs_valgrind
def test_a_command_that_fails_under_valgrind_is_reported_not_counted() -> None:
    with pytest.raises(RuntimeError, match="failed under valgrind"):
        count_instructions([sys.executable, "-c", "raise SystemExit(3)"])


def test_the_counted_process_audits_the_hands_asked_for_reading_the_url_on_stdin(
    database_url: str,
) -> None:
    _grow(database_url, 10)
    finished = subprocess.run(
        [sys.executable, "-m", "benchmarks.audit_once", "10"],
        cwd=ROOT,
        input=f"{database_url}\n",
        capture_output=True,
        text=True,
        check=False,
    )
    assert finished.returncode == 0, finished.stderr


def test_a_database_with_fewer_hands_than_asked_is_refused_rather_than_counted(
    database_url: str,
) -> None:
    _grow(database_url, 10)
    with pytest.raises(RuntimeError, match="holds 10 hands, not 20"):
        audit_first_hands(database_url, 20)


# Each count under valgrind runs the interpreter's start-up and imports, 30-40 s here, so each
# of the two tests that count runs on the one database its case is about: the URL that
# carries a password is PostgreSQL's; the audit's database that the benchmark counts is a
# SQLite file (`benchmarks.runner`, `prepared`). What the counted process does on both is
# held by the tests above, without valgrind.


@needs_valgrind
@pytest.mark.slow
@pytest.mark.parametrize("database_url", ["postgresql"], indirect=True)
def test_a_refused_count_does_not_quote_the_database_url(
    database_url: str,
) -> None:
    _grow(database_url, 1)
    with pytest.raises(RuntimeError, match="failed under valgrind") as refused:
        count_audit(database_url, 2)
    assert database_url not in str(refused.value)


@needs_valgrind
@pytest.mark.slow
@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
def test_the_cost_per_hand_is_the_growth_of_the_count_over_the_extra_hands(
    database_url: str,
) -> None:
    _grow(database_url, 3)
    counted = count_audit(database_url, 1)
    smaller, larger = counted["instructions"]["1"], counted["instructions"]["3"]
    assert smaller < larger
    assert counted["instructions_per_hand"] == round((larger - smaller) / 2)


# `prepared` is about a SQLite file, the only database the tool fills.


def test_a_missing_database_file_is_filled_with_the_hands_asked_for(tmp_path: Path) -> None:
    url = prepared(tmp_path / "counted.db", 4)
    assert _hands_in(url) == 4


def test_a_fill_leaves_no_partial_file_behind(tmp_path: Path) -> None:
    prepared(tmp_path / "counted.db", 2)
    assert sorted(path.name for path in tmp_path.iterdir()) == ["counted.db"]


def test_an_existing_database_file_is_counted_as_it_is(tmp_path: Path) -> None:
    prepared(tmp_path / "counted.db", 2)
    assert _hands_in(prepared(tmp_path / "counted.db", 6)) == 2


def test_a_relative_path_names_the_same_file_for_the_counted_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert prepared(Path("counted.db"), 2) == f"sqlite:///{tmp_path / 'counted.db'}"
