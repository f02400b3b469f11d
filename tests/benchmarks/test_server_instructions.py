"""`python -m benchmarks.server_instructions` counts a real server's instructions under
valgrind while the benchmark's clients load it (the do-nothing endpoint here: a counted
`casino-war serve` takes minutes, and its load is the main benchmark's, tested there)."""

import shutil

import pytest

from benchmarks.server_instructions import Database, count, main, measure


@pytest.mark.skipif(shutil.which("valgrind") is None, reason="valgrind is not installed")
def test_a_server_is_counted_until_its_units_have_settled() -> None:
    settled, instructions = count("noop", {}, 3)
    assert settled >= 3
    assert instructions > 0


def test_indexes_are_dropped_only_from_a_database_a_prototype_is_given() -> None:
    with pytest.raises(ValueError, match="only from a SQLite database a prototype is given"):
        count("hands", {}, 1, dropped_indexes=("ix_hands_table_id",))


def test_indexes_are_dropped_only_from_a_sqlite_database() -> None:
    with pytest.raises(ValueError, match="only from a SQLite database"):
        count("bare", {}, 1, dropped_indexes=("ix_hands_table_id",), database="postgresql")


@pytest.mark.parametrize(
    ("name", "database"), [("exchanged", "sqlite"), ("unindexed", "postgresql")]
)
def test_a_server_is_counted_only_on_a_database_it_serves(name: str, database: Database) -> None:
    with pytest.raises(ValueError, match=f"not served on {database}: {name}"):
        measure(1, 2, (name,), database=database)


def test_the_command_refuses_a_server_the_database_does_not_serve_before_counting(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit) as stopped:
        main(["--postgres", "--servers", "grouped"])
    assert stopped.value.code == 2
    assert "not served on postgresql: grouped" in capsys.readouterr().err
