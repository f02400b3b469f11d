"""Reads (`Database.reading`): on PostgreSQL, READ ONLY transactions ended by COMMIT; a read,
answered or refused, leaves its connection the statements the driver prepared on it."""

import pytest
from sqlalchemy import text
from sqlalchemy.exc import DBAPIError

from api.db.database import Database
from ledger.driver import Sql, driver_of

_PREPARED_HERE = text("SELECT count(*) FROM pg_prepared_statements")
_SOME_READ = Sql.of("SELECT count(*) FROM ledger_accounts WHERE id = :id")


def _only_postgresql(database: Database) -> None:
    if not database.is_postgresql:
        pytest.skip("sqlite3 keeps its statements across a rollback: SQLite's reads roll back")


def _prepared_on_the_pooled_connection(database: Database) -> int:
    # Units of work one after another share the pool's one connection.
    with database.transaction() as session:
        return int(session.execute(_PREPARED_HERE).scalar_one())


def _a_statement_prepared(database: Database) -> int:
    """Statements prepared on the pooled connection once `_SOME_READ` is among them."""
    with database.transaction() as session:
        driver_of(session).scalar(_SOME_READ, {"id": 1})
    return _prepared_on_the_pooled_connection(database)


def test_a_read_keeps_the_statements_prepared_on_its_connection(database: Database) -> None:
    _only_postgresql(database)
    prepared = _a_statement_prepared(database)
    assert prepared > 0

    with database.reading() as session:
        driver_of(session).scalar(_SOME_READ, {"id": 1})

    assert _prepared_on_the_pooled_connection(database) == prepared


def test_a_refused_read_keeps_the_statements_prepared_on_its_connection(
    database: Database,
) -> None:
    _only_postgresql(database)
    prepared = _a_statement_prepared(database)

    def _refused_after_reading() -> None:  # as a read of an unknown token is
        with database.reading() as session:
            driver_of(session).scalar(_SOME_READ, {"id": 1})
            raise LookupError("not found")

    with pytest.raises(LookupError):
        _refused_after_reading()

    assert _prepared_on_the_pooled_connection(database) == prepared


def test_a_read_the_database_fails_leaves_its_connection_usable(database: Database) -> None:
    _only_postgresql(database)
    with pytest.raises(DBAPIError, match="division by zero"), database.reading() as session:
        session.execute(text("SELECT 1 / 0"))

    with database.reading() as session:
        assert session.execute(text("SELECT 1")).scalar_one() == 1


def test_a_unit_of_work_after_a_read_on_the_same_connection_may_write(
    database: Database,
) -> None:
    _only_postgresql(database)
    with database.reading() as session:
        session.execute(text("SELECT 1"))

    with database.transaction() as session:
        assert session.execute(text("SHOW transaction_read_only")).scalar_one() == "off"


def test_a_read_cannot_write(database: Database) -> None:
    _only_postgresql(database)
    with (
        pytest.raises(DBAPIError, match="read-only transaction"),
        database.reading() as session,
    ):
        session.execute(text("UPDATE casino_tables SET name = name WHERE false"))
