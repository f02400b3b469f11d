"""One handle on the database: the engine, and units of work for writing and for reading."""

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection, Engine, text
from sqlalchemy.exc import DBAPIError, PendingRollbackError
from sqlalchemy.orm import Session, sessionmaker
from sqlalchemy.pool import NullPool

from ledger.database import PING_AFTER_IDLE_SECONDS, POOL_SIZE, found_lost, make_engine
from ledger.driver import driving


@dataclass(frozen=True, slots=True)
class Database:
    engine: Engine
    readers: sessionmaker[Session]
    sqlite_writer: "SqliteWriter | None"
    command_connections: "CommandConnections | None"
    prober: Engine

    @classmethod
    def connect(
        cls, url: str, timeout_seconds: float | None = None, pool_size: int = POOL_SIZE
    ) -> "Database":
        """`timeout_seconds` bounds every wait on the database: SQLite's busy wait for the
        write lock; PostgreSQL's connection attempt and each statement; a connection from
        the pool. A request that hits it is a 503 (`api.http.problems`), not a hang.

        The pool holds at most `pool_size` connections, and on SQLite one more, for the
        connection `SqliteWriter` keeps: a unit of work past them waits for one to be
        returned. Without that bound a pool opens a connection at every peak and closes it
        again, on PostgreSQL a server process each (`ledger.database.make_engine`); with
        it, PostgreSQL sees a known number of connections per server process. The server
        never runs more units of work in threads at once than the pool holds
        (`api.db.threads`), so none of them waits for a connection there. The readiness
        probe's connection (`probe`) is outside the pool: one more, while a probe runs."""
        is_sqlite = url.startswith("sqlite")
        writers_own = 1 if is_sqlite else 0  # `SqliteWriter` keeps its connection
        engine = make_engine(
            url,
            pool_size=pool_size + writers_own,
            max_overflow=0,
            **_timeouts(url, timeout_seconds),
        )
        # Reads never need SQLite's write lock: WAL gives a deferred transaction a snapshot.
        # On PostgreSQL they are READ ONLY, which is what lets `reading` end them by COMMIT.
        reader_engine = engine.execution_options(
            **({"sqlite_begin": "DEFERRED"} if is_sqlite else {"postgresql_readonly": True})
        )
        prober = make_engine(url, poolclass=NullPool, **_timeouts(url, timeout_seconds))
        return cls(
            engine=engine,
            readers=sessionmaker(reader_engine, expire_on_commit=False),
            sqlite_writer=SqliteWriter(engine) if is_sqlite else None,
            command_connections=None if is_sqlite else CommandConnections(engine),
            prober=prober.execution_options(sqlite_begin="DEFERRED"),
        )

    @property
    def is_postgresql(self) -> bool:
        return self.engine.dialect.name == "postgresql"

    @contextmanager
    def transaction(self) -> Iterator[Session]:
        """A unit of work: committed if the block returns, rolled back if it raises.

        On SQLite it runs on the writer's kept connection (`SqliteWriter`); on PostgreSQL on
        the connection its command thread keeps (`CommandConnections`), else on one from the
        pool; either way as `_unit_of_work` runs it."""
        if self.sqlite_writer is not None:
            with self.sqlite_writer.transaction() as session:
                yield session
        elif (kept := self._kept_in_this_thread()) is not None:
            with kept.transaction() as session:
                yield session
        else:
            with (
                self.engine.connect() as connection,
                _unit_of_work(connection, _joining(connection)) as session,
            ):
                yield session

    @contextmanager
    def reading(self) -> Iterator[Session]:
        """A read-only session that never holds SQLite's write lock.

        On PostgreSQL its transaction is READ ONLY and ends by COMMIT, not by the ROLLBACK
        that closing it would send: psycopg forgets every statement it prepared on a
        connection when the connection rolls back (and sends DEALLOCATE ALL). Reads ended
        by rollback, a token checked again once a second among them, had PostgreSQL plan
        each of a hand's statements once in every six to ten runs instead of once per
        connection (docs/performance-log.md, "PostgreSQL's prepared statements and the
        chain head's plan"). A read refused on the way (an unknown token, a hand not found)
        ends by COMMIT too: any client could otherwise wipe a pooled connection's statements
        at will. Only a read the database failed rolls back, as it must.

        In a command thread on PostgreSQL the read runs on the thread's kept connection, the
        same way: the thread holds it for good, and a token look-up there must not wait for
        a second connection from the pool."""
        if (kept := self._kept_in_this_thread()) is not None:
            with kept.reading() as session:
                yield session
            return
        with self.readers() as session:
            try:
                yield session
            except DBAPIError:
                raise  # closing the session rolls the failed transaction back
            except Exception:
                self._end_read(session)
                raise
            self._end_read(session)

    def _kept_in_this_thread(self) -> "KeptConnection | None":
        return self.command_connections.here() if self.command_connections else None

    def _end_read(self, session: Session) -> None:
        if self.is_postgresql:  # READ ONLY: there is nothing a COMMIT could keep
            session.commit()

    def probe(self) -> None:
        """Run a trivial statement on a connection of its own, opened for it and closed
        after: whether the database answers, however busy the pool is (a pool in full use
        is a busy server, not one that cannot serve). Raises if it does not answer."""
        with self.prober.connect() as connection:
            connection.execute(text("SELECT 1"))

    def dispose(self) -> None:
        if self.sqlite_writer is not None:
            self.sqlite_writer.close()
        if self.command_connections is not None:
            self.command_connections.close()
        self.engine.dispose()
        self.prober.dispose()


class KeptConnection:
    """A connection kept open for units of work that take turns on it, and its one `Session`.

    A unit of work on it skips the pool's checkout and return: about 80 µs each on SQLite,
    4% of a hand's instructions on the hot path, and 37-46 µs on PostgreSQL (docs/performance-
    log.md, "SQLite's writes on one kept connection"; "A hand's WAL pages, where a
    PostgreSQL hand's CPU runs, and a kept connection's worth"). It is opened anew when there
    is none or the last was lost, and, given `ping_after_idle_seconds`, pinged first once it
    has sat idle that long, as the pool pings its own (`ledger.database`): a connection gone
    stale overnight is replaced unseen instead of failing a request."""

    def __init__(self, engine: Engine, ping_after_idle_seconds: float | None = None) -> None:
        self._engine = engine
        self._ping_after_idle_seconds = ping_after_idle_seconds
        self._connection: Connection | None = None
        self._session: Session | None = None
        self._idle_since = time.monotonic()
        self.in_use = False

    @contextmanager
    def transaction(self) -> Iterator[Session]:
        with self._taken() as (connection, session), _unit_of_work(connection, session):
            yield session

    @contextmanager
    def reading(self) -> Iterator[Session]:
        """A READ ONLY transaction, ended as `Database.reading` ends one: by COMMIT, unless
        the database failed it (PostgreSQL only: SQLite's reads use the pool)."""
        with self._taken() as (connection, session):
            driver_connection: Any = connection.connection.driver_connection
            driver_connection.read_only = True  # psycopg's BEGIN becomes BEGIN READ ONLY
            transaction = connection.begin()
            try:
                yield session
            except DBAPIError:
                raise  # rolled back below, as it must be
            except Exception:
                transaction.commit()
                raise
            else:
                transaction.commit()
            finally:
                if transaction.is_active:
                    transaction.rollback()
                session.close()
                if not connection.invalidated:
                    driver_connection.read_only = False

    def close(self) -> None:
        if self._connection is not None:
            self._connection.close()
            self._connection = self._session = None

    @contextmanager
    def _taken(self) -> Iterator[tuple[Connection, Session]]:
        self.in_use = True
        try:
            yield self._kept()
        finally:
            self.in_use = False
            self._idle_since = time.monotonic()

    def _kept(self) -> tuple[Connection, Session]:
        """The kept connection and its one `Session`, both opened anew if there is none or
        the last connection was lost. A `Session` is reusable once closed: keeping it saves
        a unit of work building one, about 15 µs (docs/performance-log.md)."""
        connection = self._connection
        if connection is not None and self._found_lost(connection):
            connection.invalidate()
        if connection is None or connection.invalidated or connection.closed:
            if connection is not None:
                connection.close()
            connection = self._connection = self._engine.connect()
            self._session = None
        if self._session is None:
            self._session = _joining(connection)
        return connection, self._session

    def _found_lost(self, connection: Connection) -> bool:
        idle = self._ping_after_idle_seconds
        if idle is None or connection.invalidated or connection.closed:
            return False
        if time.monotonic() - self._idle_since < idle:
            return False  # back at work within the second
        return found_lost(self._engine, connection.connection.dbapi_connection)


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
        self._kept = KeptConnection(engine)

    @contextmanager
    def transaction(self) -> Iterator[Session]:
        with self._turn, self._kept.transaction() as session:
            yield session

    def close(self) -> None:
        with self._turn:
            self._kept.close()


class CommandConnections:
    """PostgreSQL: a connection kept by each command thread (`api.db.threads`), for its units
    of work and its reads (the token look-ups), which run there one at a time.

    The command threads are as many as half the pool's connections, so the threads that keep
    one leave the other half to the executor's threads, whose reads take turns on it as
    before; the process still opens no more connections than the pool holds. A thread that
    keeps none (the executor's, a test's, the command line's), and a unit of work begun while
    the thread's own connection is at work, take one from the pool."""

    def __init__(self, engine: Engine) -> None:
        self._engine = engine
        self._here = threading.local()
        self._lock = threading.Lock()
        self._kept: list[KeptConnection] = []

    def keep_one_in_this_thread(self) -> None:
        kept = KeptConnection(self._engine, PING_AFTER_IDLE_SECONDS)
        self._here.kept = kept
        with self._lock:
            self._kept.append(kept)

    def here(self) -> KeptConnection | None:
        """This thread's kept connection, unless it keeps none or it is at work."""
        kept: KeptConnection | None = getattr(self._here, "kept", None)
        return None if kept is None or kept.in_use else kept

    def close(self) -> None:
        """At shutdown, once the command threads have stopped taking work."""
        with self._lock:
            for kept in self._kept:
                kept.close()
            self._kept.clear()


def _joining(connection: Connection) -> Session:
    """A `Session` that joins `connection`'s transaction and never commits it: the unit of
    work does. A rollback of the `Session` does roll it back (`_unit_of_work`)."""
    return Session(bind=connection, expire_on_commit=False, join_transaction_mode="rollback_only")


@contextmanager
def _unit_of_work(connection: Connection, session: Session) -> Iterator[Session]:
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
            yield session
            session.flush()
            if not transaction.is_active:
                raise PendingRollbackError("the unit of work was rolled back inside it")
            driver.commit()  # on PostgreSQL with the writes still queued: one round trip
    finally:
        session.close()  # what it loaded goes: the next unit of work starts empty


@contextmanager
def savepoint(session: Session) -> Iterator[None]:
    """A savepoint that holds the driver's statements as well as the ORM's: a `Session`
    sends its SAVEPOINT only once asked for its connection, and the driver never asks, so
    without this the driver's writes in the block would not be taken back with it."""
    with session.begin_nested():
        session.connection()
        yield


def _timeouts(url: str, seconds: float | None) -> dict[str, Any]:
    if seconds is None:
        return {}
    if url.startswith("sqlite"):
        return {"connect_args": {"timeout": seconds}, "pool_timeout": seconds}
    milliseconds = int(seconds * 1000)
    return {
        "pool_timeout": seconds,
        "connect_args": {
            "connect_timeout": max(1, int(min(seconds, 10))),
            "options": f"-c statement_timeout={milliseconds} -c lock_timeout={milliseconds}",
        },
    }
