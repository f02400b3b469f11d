"""A unit of work: a transaction on one connection, with the driver its statements run on
and a `Session` that joins it only when ORM code asks."""

from collections.abc import Iterator
from contextlib import contextmanager

from sqlalchemy import Connection
from sqlalchemy.exc import PendingRollbackError
from sqlalchemy.orm import Session

from ledger.driver import driving


def joining_session(connection: Connection) -> Session:
    """A `Session` that joins `connection`'s transaction and never commits it: the unit of
    work does. A rollback of the `Session` does roll it back (`unit_of_work`)."""
    return Session(bind=connection, expire_on_commit=False, join_transaction_mode="rollback_only")


@contextmanager
def unit_of_work(connection: Connection, session: Session) -> Iterator[Session]:
    """A transaction on `connection`, the driver its statements run on set for the block
    (`ledger.driver.driving`), and `session` joining it only when ORM code asks it for
    something; its pending changes are flushed before the COMMIT.

    The hand path runs every statement on the driver, so it never asks, and never pays for
    the `Session`'s own begin, commit and connection look-up: an empty unit of work cost
    SQLite 19 µs of CPU instead of 33, PostgreSQL about 215 instead of 275, its round trips
    included (docs/performance.md, "What was tried").

    A `Session` rolled back inside the block (a `rollback()`, or a flush that failed outside
    a savepoint) has rolled the connection's transaction back with it: the block is then
    refused instead of returning as if it had committed."""
    try:
        with connection.begin() as transaction, driving(session, connection) as driver:
            try:
                yield session
                session.flush()
                if not transaction.is_active:
                    raise PendingRollbackError("the unit of work was rolled back inside it")
                driver.commit()  # on PostgreSQL with the writes still queued: one round trip
            except BaseException as stopped:
                invalidate_if_cut(connection, stopped)
                raise
    finally:
        # What it loaded goes, so the next unit of work starts empty; a `Session` the unit
        # never asked holds nothing, and closing it anyway cost a SQLite hand 0.6% of its
        # instructions (docs/performance.md, "What was tried").
        if session.in_transaction() or session.identity_map or session.new:
            session.close()


def invalidate_if_cut(connection: Connection, stopped: BaseException) -> None:
    """A unit of work stopped halfway (a cancelled task, an interrupt, anything not an
    `Exception`) leaves its connection in a state nobody knows, so the connection goes, as
    SQLAlchemy has it go after its own statements. The driver's statements run past
    SQLAlchemy: left to the rollback, which would fail, the connection would count as lost
    and take the whole pool with it."""
    if not isinstance(stopped, Exception):
        connection.invalidate(stopped)


@contextmanager
def savepoint(session: Session) -> Iterator[None]:
    """A savepoint that holds the driver's statements as well as the ORM's: a `Session`
    sends its SAVEPOINT only once asked for its connection, and the driver never asks, so
    without this the driver's writes in the block would not be taken back with it."""
    with session.begin_nested():
        session.connection()
        yield
