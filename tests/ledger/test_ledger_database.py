"""Engine set-up: URL normalisation and the SQLite settings that make writers queue."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import text
from sqlalchemy.exc import DBAPIError, OperationalError

from ledger.database import make_engine, normalize_url


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("sqlite:///casino-war.db", "sqlite:///casino-war.db"),
        ("sqlite:////var/lib/casino.db", "sqlite:////var/lib/casino.db"),
        ("postgresql://u@h/db", "postgresql+psycopg://u@h/db"),
        ("postgres://u:p%40ss@h:5432/db", "postgresql+psycopg://u:p%40ss@h:5432/db"),
        ("postgresql+psycopg://u@h/db", "postgresql+psycopg://u@h/db"),
    ],
)
def test_normalize_url_pins_postgresql_to_psycopg_and_keeps_sqlite(url: str, expected: str) -> None:
    assert normalize_url(url) == expected


def test_sqlite_engine_uses_wal_foreign_keys_busy_timeout_and_begin_immediate(
    tmp_path: Path,
) -> None:
    engine = make_engine(f"sqlite:///{tmp_path / 'x.db'}")
    try:
        with engine.connect() as connection:
            assert connection.execute(text("PRAGMA journal_mode")).scalar() == "wal"
            assert connection.execute(text("PRAGMA foreign_keys")).scalar() == 1
            assert connection.execute(text("PRAGMA busy_timeout")).scalar_one() >= 10_000
            # BEGIN IMMEDIATE took the write lock: a second writer cannot begin.
            other = engine.raw_connection()
            try:
                other.driver_connection.execute("PRAGMA busy_timeout=0")  # type: ignore[union-attr]
                with pytest.raises(Exception, match="locked"):
                    other.driver_connection.execute("BEGIN IMMEDIATE")  # type: ignore[union-attr]
            finally:
                other.close()
    finally:
        engine.dispose()


def test_sqlite_read_only_connection_may_begin_deferred_without_the_write_lock(
    tmp_path: Path,
) -> None:
    engine = make_engine(f"sqlite:///{tmp_path / 'x.db'}")
    try:
        with engine.connect().execution_options(sqlite_begin="DEFERRED") as reader:
            reader.execute(text("SELECT 1"))
            with engine.begin() as writer:  # would wait for the reader under IMMEDIATE
                writer.execute(text("CREATE TABLE t (x INTEGER)"))
    finally:
        engine.dispose()


def test_a_sqlite_begin_that_finds_the_database_locked_fails_as_sqlalchemy_fails(
    tmp_path: Path,
) -> None:
    engine = make_engine(f"sqlite:///{tmp_path / 'x.db'}", connect_args={"timeout": 0})
    try:
        with engine.begin() as holder, engine.connect() as waiting:
            holder.execute(text("CREATE TABLE t (x INTEGER)"))
            with pytest.raises(OperationalError, match="locked") as refused:
                waiting.begin()
            assert "BEGIN IMMEDIATE" in str(refused.value)
            assert not refused.value.connection_invalidated
    finally:
        engine.dispose()


def test_a_sqlite_begin_on_a_lost_connection_invalidates_it(tmp_path: Path) -> None:
    engine = make_engine(f"sqlite:///{tmp_path / 'x.db'}")
    try:
        with engine.connect() as connection:
            connection.connection.driver_connection.close()  # type: ignore[union-attr]
            with pytest.raises(DBAPIError) as lost:
                connection.begin()
            assert lost.value.connection_invalidated
            assert connection.invalidated
    finally:
        engine.dispose()
