"""Units of work: SQLite's writes in one process take turns on one kept connection,
PostgreSQL's do not; on both the transaction is the connection's, and the `Session` joins
it only when ORM code asks it for something."""

from datetime import UTC, datetime

import pytest
from sqlalchemy import text
from sqlalchemy.exc import DBAPIError, PendingRollbackError
from sqlalchemy.orm import Session

from api.db.database import Database
from api.db.models import Player
from api.db.units import savepoint
from ledger.driver import Sql, driver_of

_INSERT_PLAYER = Sql.of(
    "INSERT INTO players (display_name, created_at) VALUES (:name, '2026-11-26 06:00:00')"
)


def _driver_connection(database: Database) -> object:
    with database.transaction() as session:
        return session.connection().connection.driver_connection


def _count_players(database: Database) -> int:
    with database.reading() as session:
        return int(session.execute(text("SELECT count(*) FROM players")).scalar_one())


def _add_player(database: Database, name: str) -> None:
    with database.transaction() as session:
        session.execute(
            text("INSERT INTO players (display_name, created_at) VALUES (:name, :at)"),
            {"name": name, "at": "2026-11-25 08:00:00"},
        )


def _assert_the_next_unit_of_work_commits(database: Database) -> None:
    _add_player(database, "Ada")
    assert _count_players(database) == 1


def _lose_the_connection_mid_unit_of_work(database: Database) -> None:
    with database.transaction() as session:
        driver_connection = session.connection().connection.dbapi_connection
        assert driver_connection is not None
        driver_connection.close()  # as if the file had been taken away mid-request
        session.execute(text("SELECT 1"))


def _refuse_after_a_write(database: Database) -> None:
    with database.transaction() as session:
        session.execute(
            text("INSERT INTO players (display_name, created_at) VALUES ('Bo', '2026-11-25')")
        )
        raise RuntimeError("refused after a write")


def _refuse_after_orm_changes(database: Database) -> None:
    with database.transaction() as session:
        driver_of(session).execute(_INSERT_PLAYER, {"name": "Ada"})
        session.add(Player(display_name="Bo", created_at=datetime(2026, 11, 26, tzinfo=UTC)))
        session.flush()
        raise RuntimeError("refused after ORM changes")


def _refuse_inside_a_savepoint(session: Session) -> None:
    with savepoint(session):
        driver_of(session).execute(_INSERT_PLAYER, {"name": "taken back"})
        raise RuntimeError("refused inside the savepoint")


def _roll_the_session_back_after_a_write(database: Database) -> None:
    with database.transaction() as session:
        session.execute(text("SELECT 1"))  # the session joins the unit of work's transaction
        driver_of(session).execute(_INSERT_PLAYER, {"name": "Ada"})
        session.rollback()


def _player_names(database: Database) -> list[str]:
    with database.reading() as session:
        names = session.execute(text("SELECT display_name FROM players ORDER BY id")).scalars()
        return list(names)


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
def test_sqlite_units_of_work_share_one_connection(database: Database) -> None:
    assert _driver_connection(database) is _driver_connection(database)


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
def test_a_lost_writer_connection_is_replaced_by_the_next_unit_of_work(
    database: Database,
) -> None:
    with pytest.raises(DBAPIError):
        _lose_the_connection_mid_unit_of_work(database)
    _assert_the_next_unit_of_work_commits(database)


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
def test_a_writer_connection_lost_between_units_of_work_fails_one_begin_and_is_replaced(
    database: Database,
) -> None:
    lost = _driver_connection(database)
    lost.close()  # type: ignore[attr-defined]  # as if the file had been taken away
    with pytest.raises(DBAPIError) as failed:
        _add_player(database, "lost")
    assert failed.value.connection_invalidated
    _assert_the_next_unit_of_work_commits(database)


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
def test_a_unit_of_work_that_raises_writes_nothing_and_the_next_one_commits(
    database: Database,
) -> None:
    with pytest.raises(RuntimeError):
        _refuse_after_a_write(database)
    _assert_the_next_unit_of_work_commits(database)


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
def test_a_unit_of_work_starts_with_nothing_the_one_before_loaded(database: Database) -> None:
    _add_player(database, "Ada")
    with database.transaction() as session:
        loaded = session.get(Player, 1)
        assert loaded is not None
        assert len(session.identity_map) == 1
    with database.transaction() as session:
        assert len(session.identity_map) == 0


def test_a_unit_of_work_on_the_driver_never_begins_the_sessions_own_transaction(
    database: Database,
) -> None:
    with database.transaction() as session:
        driver_of(session).execute(_INSERT_PLAYER, {"name": "Ada"})
        assert session.get_transaction() is None
    assert _count_players(database) == 1


def test_orm_changes_and_driver_statements_share_the_unit_of_works_transaction(
    database: Database,
) -> None:
    with database.transaction() as session:
        driver_of(session).execute(_INSERT_PLAYER, {"name": "Ada"})
        session.add(Player(display_name="Bo", created_at=datetime(2026, 11, 26, tzinfo=UTC)))
    assert _count_players(database) == 2


def test_a_unit_of_work_that_raises_after_orm_changes_writes_nothing(database: Database) -> None:
    with pytest.raises(RuntimeError):
        _refuse_after_orm_changes(database)
    assert _count_players(database) == 0
    _assert_the_next_unit_of_work_commits(database)


def test_a_savepoint_takes_back_the_drivers_statements_too(database: Database) -> None:
    with database.transaction() as session:
        driver_of(session).execute(_INSERT_PLAYER, {"name": "kept"})
        with pytest.raises(RuntimeError):
            _refuse_inside_a_savepoint(session)
    assert _player_names(database) == ["kept"]


def test_a_unit_of_work_whose_session_rolled_back_is_refused_and_commits_nothing(
    database: Database,
) -> None:
    with pytest.raises(PendingRollbackError):
        _roll_the_session_back_after_a_write(database)
    assert _count_players(database) == 0
    _assert_the_next_unit_of_work_commits(database)


@pytest.mark.parametrize("database_url", ["postgresql"], indirect=True)
def test_postgresql_units_of_work_run_side_by_side_on_pooled_connections(
    database: Database,
) -> None:
    assert database.sqlite_writer is None
    with database.transaction() as first, database.transaction() as second:
        assert first.connection().connection is not second.connection().connection
