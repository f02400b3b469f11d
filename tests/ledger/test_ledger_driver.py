"""Statements for the driver (`ledger.driver`): one text, each dialect's spelling; writes
sent when something must reach the server anyway, in order with everything else."""

from collections.abc import Callable, Iterator
from datetime import datetime
from typing import Any

import psycopg
import pytest
from hypothesis import given
from hypothesis import strategies as st
from sqlalchemy import Engine, event, text
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from ledger.database import make_engine
from ledger.driver import Driver, Sql, driver_of, watch_exchanges
from ledger.schema import UTCDateTime, sqlite_time


def test_named_parameters_become_pyformat_for_postgresql_and_stay_named_for_sqlite() -> None:
    statement = Sql.of("SELECT a FROM t WHERE id = :id AND code = :code")
    assert statement.sqlite == "SELECT a FROM t WHERE id = :id AND code = :code"
    assert statement.postgresql == "SELECT a FROM t WHERE id = %(id)s AND code = %(code)s"


def test_rows_are_locked_on_postgresql_only() -> None:
    statement = Sql.of("SELECT a FROM t WHERE id = :id{for_update}")
    assert statement.sqlite == "SELECT a FROM t WHERE id = :id"
    assert statement.postgresql == "SELECT a FROM t WHERE id = %(id)s FOR UPDATE"


def test_casts_and_times_are_not_taken_for_parameters() -> None:
    statement = Sql.of("SELECT x::text, '12:30' FROM t WHERE id = :id")
    assert statement.postgresql == "SELECT x::text, '12:30' FROM t WHERE id = %(id)s"


_SQLITE = make_engine("sqlite://").dialect
_SQLITES_TIME_PROCESSOR = UTCDateTime().dialect_impl(_SQLITE).bind_processor(_SQLITE)


# Away from the calendar's ends, where moving to UTC would leave it.
@given(st.datetimes(datetime(2, 1, 1), datetime(9998, 12, 31), timezones=st.timezones()))
def test_a_time_is_written_for_sqlite_as_sqlalchemys_processors_write_it(moment: datetime) -> None:
    assert _SQLITES_TIME_PROCESSOR is not None
    assert sqlite_time(moment) == _SQLITES_TIME_PROCESSOR(moment)


def test_a_time_without_a_zone_is_refused_for_sqlite() -> None:
    with pytest.raises(ValueError, match="naive"):
        sqlite_time(datetime(2026, 11, 27, 12, 0))


# Writes whose result nobody reads: on PostgreSQL queued until something must reach the
# server, and sent with it; on SQLite run at once. Either way nothing can tell.

_INSERT = Sql.of("INSERT INTO probe (name) VALUES (:name)")
_NAMES = Sql.of("SELECT name FROM probe ORDER BY name")


@pytest.fixture
def probe(engine: Engine) -> Engine:
    """`engine` with a table `probe` of unique names."""
    with engine.begin() as connection:
        connection.execute(text("CREATE TABLE probe (name VARCHAR(20) PRIMARY KEY)"))
    return engine


@pytest.fixture
def one_connection(database_url: str) -> Iterator[Engine]:
    """A `probe` whose pool holds one connection, handed to one user after another."""
    engine = make_engine(database_url, pool_size=1, max_overflow=0)
    with engine.begin() as connection:
        connection.execute(text("CREATE TABLE probe (name VARCHAR(20) PRIMARY KEY)"))
    yield engine
    engine.dispose()


def _names(engine: Engine) -> list[str]:
    with engine.connect() as connection:
        return list(connection.execute(text("SELECT name FROM probe ORDER BY name")).scalars())


def test_a_write_is_seen_by_the_next_read_of_its_transaction(probe: Engine) -> None:
    with probe.begin() as connection:
        driver = Driver(connection)
        driver.execute(_INSERT, {"name": "ada"})
        assert driver.all(_NAMES, {}) == [("ada",)]


def test_a_write_is_seen_by_a_statement_of_sqlalchemys_in_its_transaction(
    probe: Engine,
) -> None:
    with probe.begin() as connection:
        Driver(connection).execute(_INSERT, {"name": "ada"})
        assert connection.execute(text("SELECT count(*) FROM probe")).scalar_one() == 1


def test_a_write_is_committed_by_a_commit_of_sqlalchemys(probe: Engine) -> None:
    with Session(probe) as session:
        driver_of(session).execute(_INSERT, {"name": "ada"})
        session.commit()
    assert _names(probe) == ["ada"]


def test_a_write_is_committed_by_the_drivers_commit_before_sqlalchemys(probe: Engine) -> None:
    with probe.begin() as connection:
        driver = Driver(connection)
        driver.execute(_INSERT, {"name": "ada"})
        driver.commit()
    assert _names(probe) == ["ada"]


# Queued (`execute`) or alongside the next statement (`alongside`), a write keeps its
# transaction's fate.
_WRITES = pytest.mark.parametrize("write", ["execute", "alongside"])


@_WRITES
def test_a_write_rolled_back_never_reaches_a_later_transaction_on_its_connection(
    probe: Engine, write: str
) -> None:
    with probe.connect() as connection:
        with connection.begin() as rolled_back:
            getattr(Driver(connection), write)(_INSERT, {"name": "dropped"})
            rolled_back.rollback()
        with connection.begin():
            connection.execute(text("SELECT 1"))  # would send whatever was still waiting
            getattr(Driver(connection), write)(_INSERT, {"name": "kept"})
    assert _names(probe) == ["kept"]


@_WRITES
def test_a_write_taken_back_by_a_savepoint_stays_taken_back(probe: Engine, write: str) -> None:
    with probe.begin() as connection:
        send = getattr(Driver(connection), write)
        send(_INSERT, {"name": "kept"})
        savepoint = connection.begin_nested()
        send(_INSERT, {"name": "taken back"})
        savepoint.rollback()
    assert _names(probe) == ["kept"]


def _insert_twice_and_commit(engine: Engine, name: str, insert: Sql = _INSERT) -> None:
    with engine.begin() as connection:
        driver = Driver(connection)
        driver.execute(insert, {"name": name})
        driver.execute(insert, {"name": name})
        driver.commit()


def _insert_and_commit(engine: Engine, name: str, insert: Sql) -> None:
    with engine.begin() as connection:
        driver = Driver(connection)
        driver.execute(insert, {"name": name})
        driver.commit()


def _insert_twice_alongside_and_read(engine: Engine, name: str) -> None:
    """The writes go with the read (PostgreSQL), whose statement then fails."""
    with engine.begin() as connection:
        driver = Driver(connection)
        driver.alongside(_INSERT, {"name": name})
        driver.alongside(_INSERT, {"name": name})
        driver.all(_NAMES, {})


@pytest.mark.parametrize(
    "insert_twice",
    [_insert_twice_and_commit, _insert_twice_alongside_and_read],
    ids=["queued, failing at the commit", "alongside, failing in the read"],
)
def test_a_write_that_fails_is_raised_as_sqlalchemy_raises_it_and_commits_nothing(
    probe: Engine, insert_twice: Callable[[Engine, str], None]
) -> None:
    with pytest.raises(IntegrityError):
        insert_twice(probe, "ada")
    assert _names(probe) == []


@pytest.mark.parametrize("database_url", ["postgresql"], indirect=True)
@pytest.mark.parametrize(
    "table", ["probe", "deferred"], ids=["a queued write failing", "the COMMIT failing"]
)
def test_a_failure_at_the_drivers_commit_commits_nothing_and_leaves_its_connection_usable(
    one_connection: Engine, table: str
) -> None:
    """A write queued with the COMMIT fails in its exchange (`probe`'s primary key); the
    COMMIT itself fails on a constraint checked only then (`deferred`'s). Six commits first,
    so that the insert is a statement its connection has prepared, as every statement of a
    hand is on a server connection after its first hands."""
    with one_connection.begin() as connection:
        connection.execute(text("CREATE TABLE deferred (name VARCHAR(20))"))
        connection.execute(
            text("ALTER TABLE deferred ADD UNIQUE (name) DEFERRABLE INITIALLY DEFERRED")
        )
    insert = Sql.of(f"INSERT INTO {table} (name) VALUES (:name)")
    for number in range(6):
        _insert_and_commit(one_connection, f"n{number}", insert)
    with pytest.raises(IntegrityError):
        _insert_twice_and_commit(one_connection, "ada", insert)
    _insert_and_commit(one_connection, "bo", insert)
    with one_connection.connect() as connection:
        names = connection.execute(text(f"SELECT name FROM {table} ORDER BY name")).scalars()
        assert list(names) == ["bo", *(f"n{number}" for number in range(6))]


def test_a_write_that_fails_at_a_commit_of_sqlalchemys_leaves_its_connection_usable(
    one_connection: Engine,
) -> None:
    with pytest.raises(IntegrityError):
        _insert_twice_and_commit_the_session(one_connection, "ada")
    with Session(one_connection) as session:
        driver_of(session).execute(_INSERT, {"name": "bo"})
        session.commit()
    assert _names(one_connection) == ["bo"]


@_WRITES
def test_two_drivers_on_one_connection_keep_their_writes_in_order(
    probe: Engine, write: str
) -> None:
    """A write waiting in one driver, queued or alongside, goes before another's statement."""
    with probe.begin() as connection:
        first, second = Driver(connection), Driver(connection)
        getattr(first, write)(_INSERT, {"name": "ada"})
        second.execute(_INSERT, {"name": "bo"})
        assert second.all(_NAMES, {}) == [("ada",), ("bo",)]
    assert _names(probe) == ["ada", "bo"]


def test_a_driver_dropping_its_writes_leaves_another_drivers_alone(probe: Engine) -> None:
    with probe.begin() as connection:
        first, second = Driver(connection), Driver(connection)
        second.execute(_INSERT, {"name": "bo"})
        first.drop_queued()
    assert _names(probe) == ["bo"]


def test_a_drivers_rows_are_its_own_when_another_driver_reads_in_between(probe: Engine) -> None:
    """(On PostgreSQL the drivers on a connection share its exchanges.)"""
    with probe.begin() as connection:
        first, second = Driver(connection), Driver(connection)
        first.execute(_INSERT, {"name": "ada"})
        first.execute(_INSERT, {"name": "bo"})
        assert first.first(_NAMES, {}) == ("ada",)
        assert second.all(_NAMES, {}) == [("ada",), ("bo",)]
        assert first.scalar(Sql.of("SELECT count(*) FROM probe"), {}) == 2


@pytest.mark.parametrize("database_url", ["postgresql"], indirect=True)
def test_a_driver_on_a_connection_replaced_since_its_last_user_runs_on_the_new_one(
    one_connection: Engine,
) -> None:
    with one_connection.connect() as connection:
        assert Driver(connection).all(_NAMES, {}) == []
        connection.invalidate()
    with one_connection.begin() as connection:
        driver = Driver(connection)
        driver.execute(_INSERT, {"name": "ada"})
        driver.commit()
    assert _names(one_connection) == ["ada"]


@pytest.mark.parametrize("database_url", ["postgresql"], indirect=True)
def test_a_write_left_outside_a_transaction_never_reaches_its_connections_next_user(
    one_connection: Engine,
) -> None:
    with one_connection.connect() as connection:
        Driver(connection).execute(_INSERT, {"name": "stale"})
    with one_connection.begin() as connection:
        connection.execute(text("SELECT 1"))  # would send whatever was still queued
        Driver(connection).execute(_INSERT, {"name": "kept"})
    assert _names(one_connection) == ["kept"]


@pytest.mark.parametrize("database_url", ["postgresql"], indirect=True)
def test_postgresql_sends_the_writes_with_the_statement_that_follows_them(
    probe: Engine,
) -> None:
    sent = _recording(probe)
    with probe.begin() as connection:
        driver = Driver(connection)
        driver.execute(_INSERT, {"name": "ada"})
        driver.execute(_INSERT, {"name": "bo"})
        assert sent == []
        driver.first(_NAMES, {})
        driver.execute(_INSERT, {"name": "cy"})
        driver.commit()
    assert sent == [
        [_INSERT.postgresql, _INSERT.postgresql, _NAMES.postgresql],
        [_INSERT.postgresql, "COMMIT"],
    ]
    assert _names(probe) == ["ada", "bo", "cy"]


# Writes alongside: on PostgreSQL each a CTE of the statement next to it, which shares its
# snapshot; on SQLite run at once.


def test_a_write_alongside_is_committed_with_its_transaction(probe: Engine) -> None:
    with probe.begin() as connection:
        driver = Driver(connection)
        driver.alongside(_INSERT, {"name": "ada"})
        driver.execute(_INSERT, {"name": "bo"})
        driver.alongside(_INSERT, {"name": "cy"})
        driver.commit()
    assert _names(probe) == ["ada", "bo", "cy"]


@pytest.mark.parametrize("database_url", ["postgresql"], indirect=True)
def test_a_write_alongside_dropped_by_its_driver_is_never_sent(probe: Engine) -> None:
    """(SQLite runs it at once: only its transaction's rollback takes it back.)"""
    with probe.begin() as connection:
        driver = Driver(connection)
        driver.alongside(_INSERT, {"name": "dropped"})
        driver.drop_queued()
        driver.execute(_INSERT, {"name": "kept"})
        driver.commit()
    assert _names(probe) == ["kept"]


@pytest.mark.parametrize("database_url", ["postgresql"], indirect=True)
def test_a_write_alongside_cannot_hold_a_with_of_its_own(probe: Engine) -> None:
    with probe.begin() as connection, pytest.raises(ValueError, match="WITH"):
        Driver(connection).alongside(Sql.of("with x as (select 1) " + _INSERT.sqlite), {})


def test_a_write_alongside_is_seen_by_a_statement_of_sqlalchemys(probe: Engine) -> None:
    with probe.begin() as connection:
        Driver(connection).alongside(_INSERT, {"name": "ada"})
        assert connection.execute(text("SELECT count(*) FROM probe")).scalar_one() == 1


@pytest.mark.parametrize("database_url", ["postgresql"], indirect=True)
def test_postgresql_sends_writes_alongside_as_ctes_of_the_next_statement_which_does_not_see_them(
    probe: Engine,
) -> None:
    sent = _recording(probe)
    with probe.begin() as connection:
        driver = Driver(connection)
        driver.alongside(_INSERT, {"name": "ada"})
        driver.alongside(_INSERT, {"name": "bo"})
        assert sent == []
        assert driver.all(_NAMES, {}) == []  # one snapshot: the statement beside them
        assert driver.all(_NAMES, {}) == [("ada",), ("bo",)]
    [first], [second], ended = sent
    assert ended == ["commit()"]  # SQLAlchemy's, the transaction's writes all sent
    assert first.startswith("WITH alongside0 AS (INSERT") and first.endswith(_NAMES.postgresql)
    assert second == _NAMES.postgresql


@pytest.mark.parametrize("database_url", ["postgresql"], indirect=True)
def test_postgresql_sends_a_write_alongside_the_last_write_queued(probe: Engine) -> None:
    sent = _recording(probe)
    with probe.begin() as connection:
        driver = Driver(connection)
        driver.execute(_INSERT, {"name": "ada"})
        driver.alongside(_INSERT, {"name": "bo"})
        driver.commit()
    [(write, commit)] = sent
    assert write.startswith("WITH alongside0 AS (INSERT") and commit == "COMMIT"
    assert _names(probe) == ["ada", "bo"]


@pytest.mark.parametrize("database_url", ["postgresql"], indirect=True)
def test_postgresql_sends_a_write_alongside_nothing_as_a_statement_before_the_commit(
    probe: Engine,
) -> None:
    sent = _recording(probe)
    with probe.begin() as connection:
        driver = Driver(connection)
        driver.alongside(_INSERT, {"name": "ada"})
        driver.commit()
    assert sent == [[_INSERT.postgresql, "COMMIT"]]
    assert _names(probe) == ["ada"]


def _insert_twice_and_commit_the_session(engine: Engine, name: str) -> None:
    with Session(engine) as session:
        driver = driver_of(session)
        driver.execute(_INSERT, {"name": name})
        driver.execute(_INSERT, {"name": name})
        session.commit()


def _recording(engine: Engine) -> list[list[str]]:
    """What the drivers send on the connections `engine` opens from now on, exchange by
    exchange (each one round trip), and each of psycopg's own commits that ends a
    transaction (as ["commit()"])."""
    sent: list[list[str]] = []
    watch_exchanges(engine, sent.append)

    @event.listens_for(engine, "connect")
    def _commits_noted(dbapi_connection: Any, _record: Any) -> None:
        commit = dbapi_connection.commit

        def noted_commit() -> None:
            if dbapi_connection.pgconn.transaction_status != psycopg.pq.TransactionStatus.IDLE:
                sent.append(["commit()"])
            commit()

        dbapi_connection.commit = noted_commit

    engine.dispose()
    return sent
