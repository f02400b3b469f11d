"""Connections kept open for units of work that take turns on them: SQLite's one writer, and
on PostgreSQL one for each unit of work the event loop runs at once (`api.db.loop_units`).

A unit of work on a kept connection skips the pool's checkout and return: about 80 µs each
on SQLite, 4% of a hand's instructions on the hot path; on PostgreSQL 37 µs each, 9% of a
placed hand's units of work in process (docs/performance-log.md, "SQLite's writes on one
kept connection"; "A connection kept by each command thread").
"""

import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import datetime
from typing import Any, Protocol

from psycopg.pq import TransactionStatus
from sqlalchemy import Connection, Engine, RootTransaction
from sqlalchemy.exc import DBAPIError
from sqlalchemy.orm import Session

from api.db.units import invalidate_if_cut, joining_session, unit_of_work
from ledger.database import found_lost
from ledger.driver import Driver, Row, Sql


class Reads(Protocol):
    """The reads of a driver (`ledger.driver.Driver`), and nothing that writes: what reads
    that stand alone need (`KeptConnection.alone`, `api.db.database.Database.reading_alone`),
    where a write would have no transaction of its own to go in."""

    def first(self, sql: Sql, parameters: Mapping[str, Any]) -> Row | None: ...

    def scalar(self, sql: Sql, parameters: Mapping[str, Any]) -> Any: ...

    def all(self, sql: Sql, parameters: Mapping[str, Any]) -> Sequence[Row]: ...

    def read_time(self, stored: Any) -> datetime: ...


class Losses:
    """How many kept connections have been found lost: one lost connection is news for the
    others (a server restarted, a network cut), which ping theirs before they next work
    instead of each failing a request first."""

    def __init__(self) -> None:
        self.count = 0
        self._lock = threading.Lock()

    def note(self) -> None:
        with self._lock:  # rare; the units of work only read the count
            self.count += 1


class KeptConnection:
    """A connection kept open, and its one `Session`, for units of work one at a time.

    It is opened anew when there is none or the last was lost. Given
    `ping_after_idle_seconds`, it is pinged before a unit of work once it has sat idle that
    long, as the pool pings its own (`ledger.database`), and whenever another kept
    connection sharing its `losses` has been found lost since its last unit of work: a
    connection gone stale is replaced unseen instead of failing a request."""

    def __init__(
        self,
        engine: Engine,
        ping_after_idle_seconds: float | None = None,
        losses: Losses | None = None,
    ) -> None:
        self._engine = engine
        self._ping_after_idle_seconds = ping_after_idle_seconds
        self._losses = losses
        self._losses_seen = losses.count if losses else 0
        self._connection: Connection | None = None
        self._session: Session | None = None
        self._idle_since = time.monotonic()
        self._in_use = False

    @property
    def in_use(self) -> bool:
        return self._in_use

    @contextmanager
    def transaction(self) -> Iterator[Session]:
        with self._taken() as (connection, session), unit_of_work(connection, session):
            yield session

    @contextmanager
    def reading(self) -> Iterator[Session]:
        """A READ ONLY transaction (PostgreSQL's: SQLite's reads use the pool), ended as
        `Database.reading` ends one: by COMMIT, unless the database failed it. Whatever
        happened, the connection is left out of any transaction and writable, or replaced."""
        with self._taken() as (connection, session):
            driver_connection: Any = connection.connection.driver_connection
            transaction = connection.begin()
            try:
                driver_connection.read_only = True  # its BEGIN becomes BEGIN READ ONLY
                yield session
            except DBAPIError:
                raise  # rolled back as the block closes, as it must be
            except Exception:
                transaction.commit()
                raise
            except BaseException as stopped:
                invalidate_if_cut(connection, stopped)
                raise
            else:
                transaction.commit()
            finally:
                self._end_read(connection, driver_connection, transaction, session)

    @contextmanager
    def alone(self) -> Iterator[Reads]:
        """Reads that each run alone, in no transaction (psycopg's autocommit): a single
        read is its own snapshot, in one round trip where a READ ONLY transaction takes
        three (BEGIN, the read, COMMIT). A token looked up so cost 190-220 µs of CPU in
        process, against 650-825 through the ORM in such a transaction
        (docs/performance-log.md, "A token looked up on the hot path"). Whatever happens,
        the connection is left out of autocommit, or replaced: a unit of work on a
        connection left in autocommit would commit statement by statement."""
        with self._taken() as (connection, _):
            driver_connection: Any = connection.connection.driver_connection
            try:
                driver_connection.autocommit = True
            except Exception:
                connection.invalidate()
                raise
            try:
                yield Driver(connection)
            except BaseException as stopped:
                invalidate_if_cut(connection, stopped)
                raise
            finally:
                _leave_autocommit(connection, driver_connection)

    def close(self) -> None:
        if self._connection is not None:
            self._connection.close()
            self._connection = self._session = None

    def _end_read(
        self,
        connection: Connection,
        driver_connection: Any,
        transaction: RootTransaction,
        session: Session,
    ) -> None:
        """Roll back a transaction still open (a failed read, a failed COMMIT), and give the
        connection its usual BEGIN back; a connection that cannot be cleaned is replaced."""
        try:
            transaction.close()
            session.close()
            cleaned = driver_connection.info.transaction_status == TransactionStatus.IDLE
            if cleaned:
                driver_connection.read_only = None  # the server's default, as pooled
        except Exception:
            cleaned = False  # the read's own outcome, not this, is what to report
        if not cleaned and not connection.invalidated:
            connection.invalidate()

    @contextmanager
    def _taken(self) -> Iterator[tuple[Connection, Session]]:
        self._in_use = True
        connection: Connection | None = None
        try:
            connection, session = self._opened()
            yield connection, session
        finally:
            self._in_use = False
            self._idle_since = time.monotonic()
            if connection is not None and _is_lost(connection):
                self._note_loss()

    def _opened(self) -> tuple[Connection, Session]:
        """The kept connection and its one `Session`, both opened anew if there is none or
        the last connection was lost. A `Session` is reusable once closed: keeping it saves
        a unit of work building one, about 15 µs (docs/performance-log.md)."""
        connection = self._connection
        lost = connection is None or _is_lost(connection)
        if connection is not None and not lost and self._found_lost(connection):
            self._note_loss()
            connection.invalidate()
            lost = True
        if connection is None or lost:
            if connection is not None:
                connection.close()
                self._connection = self._session = None
            try:
                connection = self._connection = self._engine.connect()
            except DBAPIError:
                self._note_loss()  # the database cannot be reached: the others are suspect
                raise
        if self._session is None:
            self._session = joining_session(connection)
        return connection, self._session

    def _found_lost(self, connection: Connection) -> bool:
        """Ping when the connection sat idle past the limit, or another was lost since."""
        losses = self._losses.count if self._losses else 0
        idle = self._ping_after_idle_seconds
        if losses == self._losses_seen and (
            idle is None or time.monotonic() - self._idle_since < idle
        ):
            return False  # back at work within the second, and no news of a loss
        self._losses_seen = losses
        try:
            return found_lost(self._engine, connection.connection.dbapi_connection)
        except self._engine.dialect.loaded_dbapi.Error:
            return True  # a connection that cannot answer a ping is of no use either

    def _note_loss(self) -> None:
        if self._losses is not None:
            self._losses.note()
            self._losses_seen = self._losses.count  # its own news: it replaces its connection


def _leave_autocommit(connection: Connection, driver_connection: Any) -> None:
    """The connection back to transactions, or, where it cannot be, invalidated: the
    reads' own outcome, not this, is what to report."""
    if _is_lost(connection):
        return
    try:
        driver_connection.autocommit = False
    except Exception:
        connection.invalidate()


def _is_lost(connection: Connection) -> bool:
    """Whether SQLAlchemy or the driver already knows the connection lost or closed: the
    driver's own statements (`ledger.driver`) fail past SQLAlchemy, which then never
    invalidates it. (sqlite3's connections say nothing of it: SQLite's writer relies on
    SQLAlchemy alone.)"""
    if connection.invalidated or connection.closed:
        return True
    return bool(getattr(connection.connection.driver_connection, "closed", False))


class SqliteWriter:
    """This process's writes to SQLite, one at a time, on one connection kept open.

    SQLite has one writer at a time. Queuing this process's writers on a lock is fair and
    prompt; left to SQLite's busy handler they poll with growing sleeps, and under load a
    writer sleeps on long after the lock is free: a slow tail. Since they take turns
    anyway, they share one `KeptConnection`, and its page cache stays warm. Reads keep their
    own pooled connections, which never wait for the writer.
    """

    def __init__(self, engine: Engine) -> None:
        self._turn = threading.Lock()
        self._connection = KeptConnection(engine)

    @contextmanager
    def transaction(self) -> Iterator[Session]:
        with self._turn, self._connection.transaction() as session:
            yield session

    def close(self) -> None:
        with self._turn:
            self._connection.close()
