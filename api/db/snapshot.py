"""Consistent reads: one snapshot of the whole database for audits and reports."""

import re
from collections.abc import Iterator
from contextlib import contextmanager

from sqlalchemy import Connection, Engine, text
from sqlalchemy.orm import Session


def connection_of(session_or_connection: Session | Connection) -> Connection:
    if isinstance(session_or_connection, Session):
        return session_or_connection.connection()
    return session_or_connection


@contextmanager
def read_snapshot(engine: Engine, snapshot: str | None = None) -> Iterator[Connection]:
    """A read-only connection that sees one consistent state of the whole database.

    PostgreSQL: REPEATABLE READ, so hands and ledger rows read minutes apart still agree;
    with `snapshot` (an id from `export_snapshot`), exactly the state another transaction
    sees, so parallel workers read what their coordinator reads.
    SQLite: a DEFERRED transaction (WAL gives it a snapshot) rather than the engine's
    default BEGIN IMMEDIATE, so a long audit never holds the write lock. SQLite cannot share
    a snapshot between connections: `snapshot` must be None there.
    """
    with engine.connect() as connection:
        if engine.dialect.name == "postgresql":
            connection = connection.execution_options(isolation_level="REPEATABLE READ")
        else:
            connection = connection.execution_options(sqlite_begin="DEFERRED")
        with connection.begin() as transaction:
            try:
                if snapshot is not None:
                    _import_snapshot(connection, snapshot)
                yield connection
            finally:
                transaction.rollback()


def export_snapshot(connection: Connection) -> str | None:
    """PostgreSQL: an id other connections can adopt (`read_snapshot(engine, id)`) for as long
    as this transaction stays open. None on SQLite, which has no such thing."""
    if connection.dialect.name != "postgresql":
        return None
    return str(connection.execute(text("SELECT pg_export_snapshot()")).scalar_one())


_SNAPSHOT_ID = re.compile(r"[0-9A-Fa-f-]+")


def _import_snapshot(connection: Connection, snapshot: str) -> None:
    # A utility statement takes no bound parameters; the id (hex digits and dashes, as
    # PostgreSQL exports them) is checked before it is written into the statement.
    if not _SNAPSHOT_ID.fullmatch(snapshot):
        raise ValueError("not a PostgreSQL snapshot id")
    connection.execute(text(f"SET TRANSACTION SNAPSHOT '{snapshot}'"))
