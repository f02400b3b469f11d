"""Engine set-up: URL normalisation, the SQLite settings that make writers queue, and on
PostgreSQL the pool's ping of idle connections and READ COMMITTED pinned."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import psycopg
import pytest
from hypothesis import given
from hypothesis import strategies as st
from sqlalchemy import Engine, text
from sqlalchemy.exc import DBAPIError, OperationalError
from sqlalchemy.orm import Session
from sqlalchemy.pool import NullPool

from ledger.database import json_text, make_engine, normalize_url
from ledger.driver import Sql, driver_of


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


_JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**63 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=12,
)


@given(_JSON_VALUES)
def test_a_json_columns_text_reads_back_as_the_value_written(value: Any) -> None:
    assert json.loads(json_text(value)) == value


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


def _terminate_backend(engine: Engine, pid: int) -> None:
    """The server drops one of the engine's connections, as a restart drops them all."""
    admin = make_engine(str(engine.url), poolclass=NullPool)
    try:
        with admin.connect() as connection:
            connection.execute(text("SELECT pg_terminate_backend(:pid)"), {"pid": pid})
    finally:
        admin.dispose()


def _backend_pid(engine: Engine) -> int:
    """A unit of work as the hot path runs one: a statement on the session's driver."""
    with Session(engine) as session, session.begin():
        return int(driver_of(session).scalar(_BACKEND_PID, {}))


_BACKEND_PID = Sql.of("SELECT pg_backend_pid()")


def _postgresql_engine(database_url: str, ping_after_idle_seconds: float) -> Engine:
    if not database_url.startswith("postgresql"):
        pytest.skip("the idle ping is for a server's connections; a SQLite file has none")
    return make_engine(
        database_url, pool_size=2, max_overflow=0, ping_after_idle_seconds=ping_after_idle_seconds
    )


def _pool_both(engine: Engine) -> set[int]:
    """Both of the pool's connections opened and back in it; their server processes."""
    with Session(engine) as first, first.begin(), Session(engine) as second, second.begin():
        return {int(driver_of(s).scalar(_BACKEND_PID, {})) for s in (first, second)}


def test_a_postgresql_connection_that_sat_idle_is_pinged_and_a_lost_one_replaced_unseen(
    database_url: str,
) -> None:
    engine = _postgresql_engine(database_url, ping_after_idle_seconds=0.0)  # every checkout
    try:
        dropped = _pool_both(engine)
        for pid in dropped:
            _terminate_backend(engine, pid)
        assert _backend_pid(engine) not in dropped  # no error: the ping found it lost
    finally:
        engine.dispose()


def test_a_postgresql_connection_back_within_the_second_is_not_pinged_and_its_loss_fails_once(
    database_url: str,
) -> None:
    """Unpinged, the lost connection fails one unit of work; the pool is then replaced as a
    whole, so the next unit of work gets a new connection, not the other lost one."""
    engine = _postgresql_engine(database_url, ping_after_idle_seconds=3600.0)  # never
    try:
        dropped = _pool_both(engine)
        for pid in dropped:
            _terminate_backend(engine, pid)
        with pytest.raises(OperationalError) as lost:
            _backend_pid(engine)
        assert lost.value.connection_invalidated
        assert _backend_pid(engine) not in dropped
    finally:
        engine.dispose()


def test_a_ping_that_fails_on_a_live_connection_is_reported_and_replaces_nothing(
    database_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Only a lost connection replaces the pool, as with pre-ping: any other failure of the
    ping (injected here: a live server rarely fails a ping) is the unit of work's error."""
    engine = _postgresql_engine(database_url, ping_after_idle_seconds=0.0)  # every checkout
    try:
        pooled = _pool_both(engine)

        def cancelled(_dbapi_connection: object) -> bool:
            raise psycopg.errors.QueryCanceled("canceling statement due to user request")

        monkeypatch.setattr(engine.dialect, "do_ping", cancelled)
        with pytest.raises(DBAPIError) as failed:
            _backend_pid(engine)
        assert not failed.value.connection_invalidated
        monkeypatch.undo()
        assert _backend_pid(engine) in pooled
    finally:
        engine.dispose()


@pytest.mark.parametrize("database_url", ["postgresql"], indirect=True)
def test_a_postgresql_transaction_reads_committed_whatever_the_databases_default(
    database_url: str,
) -> None:
    """A read after a lock must see what the lock's previous holder committed (the
    Idempotency-Key's record, rows locked FOR UPDATE): READ COMMITTED, which a database
    configured for REPEATABLE READ must not change, neither on a new connection nor on one
    returned to the pool by a read that asked for one snapshot (`api.db.snapshot`)."""
    setup = make_engine(database_url, poolclass=NullPool)
    try:
        with setup.begin() as connection:
            name = connection.execute(text("SELECT current_database()")).scalar_one()
            connection.execute(
                text(
                    f'ALTER DATABASE "{name}" '
                    "SET default_transaction_isolation = 'repeatable read'"
                )
            )
    finally:
        setup.dispose()
    engine = make_engine(database_url, pool_size=1, max_overflow=0)
    try:
        with engine.begin() as connection:
            new = connection.execute(_ISOLATION).scalar_one()
        with engine.connect() as connection:
            snapshot = connection.execution_options(isolation_level="REPEATABLE READ")
            with snapshot.begin():
                asked = snapshot.execute(_ISOLATION).scalar_one()
        with engine.begin() as connection:
            returned = connection.execute(_ISOLATION).scalar_one()
    finally:
        engine.dispose()
    assert (new, asked, returned) == ("read committed", "repeatable read", "read committed")


_ISOLATION = text("SHOW transaction_isolation")
