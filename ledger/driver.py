"""Statements run straight on the database driver, for the request paths that run per hand.

SQLAlchemy compiles, caches, binds and wraps every statement it executes; on the dozen
statements of a hand that costs the server more CPU than the database's own work. Those
paths therefore keep their SQL as text, written once and rendered once per dialect, and run
it on the driver's connection that SQLAlchemy opened for the unit of work (SQLite's cursor;
on PostgreSQL exchanges of our own, `ledger.pq_exchange`): it shares that transaction, so
Core code before and after sees its writes (the ORM's pending objects are not flushed
first: flush before mixing the two). Values are converted with the very processors
SQLAlchemy applies (`UTCDateTime`, `JSON`), so a row written here reads back like any other.

On PostgreSQL a write whose result nobody reads (`Driver.execute`) waits until something
must go to the server anyway, a read or the COMMIT, and goes with it in one round trip: a
hand's last writes, its postings, its chain's head and its key's record, then cost no round
trip of their own. A write that nothing beside it depends on (`Driver.alongside`) costs no
statement of its own either: it becomes a data-modifying CTE of the statement next to it,
for one statement more costs the server 20-65 µs (docs/performance-log.md, "PostgreSQL: a
statement costs what a round trip costs"). What runs on the connection through SQLAlchemy
or another driver sees them all: a statement of SQLAlchemy's, its commit and another
driver's statement send them first, a rollback drops them, so does the connection's return
to the pool (`send_queued_writes_first`), and a write that fails fails the statement it
went with, in the same transaction, its parameters copied when it was queued. Only
statements sent on the DBAPI connection itself, past both, would not.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Hashable, Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache
from typing import Any, cast

from sqlalchemy import JSON, Connection, Engine, event
from sqlalchemy.engine import Dialect
from sqlalchemy.exc import DBAPIError, StatementError
from sqlalchemy.orm import Session
from sqlalchemy.pool import ConnectionPoolEntry, PoolProxiedConnection

from ledger.alongside import Queued, starts_with_with
from ledger.pq_exchange import Exchanges, Observer, Statement
from ledger.schema import UTCDateTime, sqlite_time

_PARAMETER = re.compile(r"(?<![:\w]):(\w+)")
_FOR_UPDATE = "{for_update}"

Row = tuple[Any, ...]


@dataclass(frozen=True, slots=True)
class Sql:
    """One statement in both dialects' spellings.

    Written with `:name` parameters and `{for_update}` where PostgreSQL must lock the rows
    read (SQLite needs no row locks: `BEGIN IMMEDIATE` already serialises every writer).
    """

    sqlite: str
    postgresql: str

    @classmethod
    def of(cls, text: str) -> Sql:
        return cls.each(text.replace(_FOR_UPDATE, ""), text.replace(_FOR_UPDATE, " FOR UPDATE"))

    @classmethod
    def each(cls, sqlite: str, postgresql: str) -> Sql:
        """A statement each dialect spells its own way."""
        return cls(sqlite=sqlite, postgresql=_PARAMETER.sub(r"%(\1)s", postgresql))


@dataclass(frozen=True, slots=True)
class _Conversions:
    time: Callable[[datetime], Any]
    read_time: Callable[[Any], datetime]
    json: Callable[[Any], Any]


@lru_cache(maxsize=16)
def _conversions(dialect: Dialect) -> _Conversions:
    """The dialect's own processors (psycopg's JSON wrapper; SQLite's time, `sqlite_time`):
    an engine has one dialect for its whole life, so they are looked up once per engine."""
    json_impl = JSON().dialect_impl(dialect)
    time_impl = UTCDateTime().dialect_impl(dialect)
    time_processor = time_impl.bind_processor(dialect)
    time_reader = time_impl.result_processor(dialect, None)
    json_processor = json_impl.bind_processor(dialect)

    def processed_time(moment: datetime) -> Any:
        return time_processor(moment) if time_processor is not None else moment

    def read_time(stored: Any) -> datetime:
        moment = time_reader(stored) if time_reader is not None else stored
        assert isinstance(moment, datetime)
        return moment

    def as_json(value: Any) -> Any:
        return json_processor(value) if json_processor is not None else value

    time = sqlite_time if dialect.name == "sqlite" else processed_time
    return _Conversions(time, read_time, as_json)


class Driver:
    """The driver's statements for one unit of work, and the dialect's value conversions."""

    def __init__(self, connection: Connection) -> None:
        self.is_postgresql = connection.dialect.name == "postgresql"
        proxied = connection.connection
        self._info = proxied.info
        if self.is_postgresql:
            self._exchanges = _exchanges_of(proxied, self._info)
        else:
            self._cursor = proxied.cursor()
        self._queued: list[Queued] = []
        self._alongside: list[tuple[str, Mapping[str, Any]]] = []
        """Writes to go alongside the next statement sent (`alongside`)."""
        self._dialect = connection.dialect
        self._dbapi = connection.dialect.loaded_dbapi
        conversions = _conversions(connection.dialect)
        self.time = conversions.time
        self.read_time = conversions.read_time
        self.json = conversions.json
        self.known: dict[Hashable, Any] = {}
        """What this unit of work has already established (a row a statement locked, say),
        under its callers' own keys, so that a later step need not ask the database again."""

    def execute(self, sql: Sql, parameters: Mapping[str, Any]) -> None:
        """Run a write whose result nobody reads: on PostgreSQL, queued until the next
        statement that must reach the server (a read, SQLAlchemy's, the COMMIT) and sent
        with it; on SQLite, in process, at once. A queued write that fails is raised by
        that statement."""
        if not self.is_postgresql:
            self._run_sqlite(sql.sqlite, parameters)
            return
        self._take_the_queue()
        self._queued.append(self._next_statement(sql.postgresql, dict(parameters)))

    def alongside(self, sql: Sql, parameters: Mapping[str, Any]) -> None:
        """Run a write whose result nobody reads, that nothing in the unit of work reads
        before its COMMIT, and that touches no row the statement beside it writes: on
        PostgreSQL it goes as a data-modifying CTE of the last write queued, else of the
        next statement sent (a read or a queued write), and shares that statement's snapshot
        (an UPDATE of a row that statement inserts would match nothing); before a COMMIT, or
        a statement of SQLAlchemy's, with nothing else to go with, it goes as a statement of
        its own. On SQLite, in process, at once. A hand's row, its seed pair's nonce and its
        key's record are such writes. `sql` must be one plain statement, without a WITH of
        its own (a CTE cannot hold one). Its locks are taken when that statement runs, after
        the statement's own: it must lock nothing it could wait for."""
        if not self.is_postgresql:
            self._run_sqlite(sql.sqlite, parameters)
            return
        if starts_with_with(sql.postgresql):
            raise ValueError("a write alongside another statement cannot hold a WITH")
        self._take_the_queue()
        write = (sql.postgresql, dict(parameters))
        if self._queued:
            self._queued[-1].alongside.append(write)
        else:
            self._alongside.append(write)

    def scalar(self, sql: Sql, parameters: Mapping[str, Any]) -> Any:
        """The first column of the first row (None without a row)."""
        row = self.first(sql, parameters)
        return None if row is None else row[0]

    def first(self, sql: Sql, parameters: Mapping[str, Any]) -> Row | None:
        if not self.is_postgresql:
            return cast(Row | None, self._run_sqlite(sql.sqlite, parameters).fetchone())
        rows = self._read(sql.postgresql, parameters)
        return rows[0] if rows else None

    def all(self, sql: Sql, parameters: Mapping[str, Any]) -> Sequence[Row]:
        if not self.is_postgresql:
            return cast(Sequence[Row], self._run_sqlite(sql.sqlite, parameters).fetchall())
        return self._read(sql.postgresql, parameters)

    def commit(self) -> None:
        """PostgreSQL: the queued writes and the COMMIT in one round trip. SQLAlchemy's own
        commit, which must still follow to end its transaction, then finds the connection's
        transaction over and sends nothing. Without queued writes, and on SQLite, nothing:
        SQLAlchemy's commit does it all.

        The COMMIT goes in the exchange with the writes, not by psycopg's `commit()` after
        them, which would be a round trip of its own (docs/performance-log.md, "A hand's
        COMMIT waited twice")."""
        self._queue_what_waits_alongside()
        if self._queued:
            self._sent(self._taken_queue(), commit=True)

    def send_queued(self) -> None:
        """Send the queued writes now, in one round trip: something else is about to run on
        the connection and must find them done."""
        self._queue_what_waits_alongside()
        if self._queued:
            self._sent(self._taken_queue())

    def drop_queued(self) -> None:
        """Forget the queued writes: their transaction is being rolled back."""
        self._queued.clear()
        self._alongside.clear()
        self._let_go_of_the_queue()

    def _read(self, text: str, parameters: Mapping[str, Any]) -> list[Row]:
        """PostgreSQL: the queued writes and the read in one exchange; the read's rows."""
        self._send_anothers_queue()
        read = self._next_statement(text, parameters).composed()
        return self._sent([*self._taken_queue(), read])

    def _next_statement(self, text: str, parameters: Mapping[str, Any]) -> Queued:
        """The next statement to send, with the writes waiting to go alongside it."""
        waiting, self._alongside = self._alongside, []
        return Queued(text, parameters, waiting)

    def _queue_what_waits_alongside(self) -> None:
        """Writes waiting alongside with nothing left to go with: each a statement of its own."""
        self._queued.extend(Queued(text, values) for text, values in self._alongside)
        self._alongside = []

    def _take_the_queue(self) -> None:
        """Become the connection's driver with queued writes, another's sent first."""
        self._send_anothers_queue()
        self._info[_QUEUED] = self

    def _send_anothers_queue(self) -> None:
        """One connection, one order of statements, whichever driver they came through."""
        holder = self._info.get(_QUEUED)
        if holder is not None and holder is not self:
            holder.send_queued()

    def _let_go_of_the_queue(self) -> None:
        if self._info.get(_QUEUED) is self:
            del self._info[_QUEUED]

    def _taken_queue(self) -> list[Statement]:
        """The queued writes as they are sent, the queue left empty and let go of."""
        queued = [statement.composed() for statement in self._queued]
        self._queued = []
        self._let_go_of_the_queue()
        return queued

    def _sent(self, statements: Sequence[Statement], *, commit: bool = False) -> list[Row]:
        """`statements`, and the COMMIT if `commit`, in one round trip; the last one's rows.
        A failure names every statement sent, for it may have been any of them."""
        try:
            return self._exchanges.run(statements, commit=commit)
        except self._dbapi.Error as error:
            texts = [text for text, _ in statements] + ([_COMMIT] if commit else [])
            raise self._wrapped(error, ";\n".join(texts)) from error

    def _run_sqlite(self, text: str, parameters: Mapping[str, Any]) -> Any:
        try:
            self._cursor.execute(text, parameters)
        except self._dbapi.Error as error:
            raise self._wrapped(error, text) from error
        return self._cursor

    def _wrapped(self, error: Exception, text: str) -> StatementError:
        """`error` as SQLAlchemy raises it (IntegrityError, OperationalError...), so that
        callers handle one family of errors; the parameters, which may hold secrets, are
        never quoted."""
        return DBAPIError.instance(
            text, None, error, self._dbapi.Error, hide_parameters=True, dialect=self._dialect
        )


_COMMIT = "COMMIT"

_EXCHANGES = "ledger.driver.exchanges"
"""`Connection.info` key: a PostgreSQL connection's exchanges, and what is prepared on it."""


def _exchanges_of(proxied: PoolProxiedConnection, info: dict[Any, Any]) -> Exchanges:
    """The connection's exchanges, made for its first driver. They go with the connection:
    the pool empties `info` when it replaces one."""
    exchanges = info.get(_EXCHANGES)
    if exchanges is None:
        exchanges = info[_EXCHANGES] = Exchanges(cast(Any, proxied.driver_connection))
    return cast(Exchanges, exchanges)


_QUEUED = "ledger.driver.queued"
"""`Connection.info` key: the driver whose writes wait to be sent on that connection."""


def send_queued_writes_first(engine: Engine) -> None:
    """Keep every other use of `engine`'s connections in order with the drivers' queued
    writes: a statement of SQLAlchemy's (the ORM's flush, a SAVEPOINT, Core) and a commit
    send them first; a rollback drops them, and so does the connection's return to the pool
    (a driver used without a transaction of SQLAlchemy's sees no rollback). For PostgreSQL's
    engines, whose drivers queue."""

    def send(connection: Connection, *_: Any) -> None:
        holder = connection.info.get(_QUEUED)
        if holder is not None:
            holder.send_queued()

    def send_before_commit(connection: Connection) -> None:
        holder = connection.info.get(_QUEUED)
        if holder is None:
            return
        try:
            holder.send_queued()
        except Exception:
            # SQLAlchemy runs its commit listeners outside its own handling of errors: it
            # would neither roll the failed transaction back nor have the pool reset it.
            with suppress(connection.dialect.loaded_dbapi.Error):
                connection.connection.driver_connection.rollback()  # type: ignore[union-attr]
            raise

    def drop(connection: Connection) -> None:
        if connection.invalidated:
            return  # lost, and its queue with it: the pool clears its record's info
        holder = connection.info.get(_QUEUED)
        if holder is not None:
            holder.drop_queued()

    def drop_at_checkin(_dbapi_connection: Any, record: ConnectionPoolEntry) -> None:
        holder = record.info.get(_QUEUED)
        if holder is not None:
            holder.drop_queued()

    event.listen(engine, "before_cursor_execute", send)
    event.listen(engine, "commit", send_before_commit)
    event.listen(engine, "rollback", drop)
    event.listen(engine, "checkin", drop_at_checkin)


def watch_exchanges(engine: Engine, observer: Observer) -> None:
    """Tell `observer` of every exchange the drivers send on the PostgreSQL connections
    `engine` opens from now on (one round trip each): what the tests and the benchmarks
    count. SQLAlchemy's own statements go by psycopg's cursors, past it."""

    @event.listens_for(engine, "connect")
    def _watched(dbapi_connection: Any, record: ConnectionPoolEntry) -> None:
        record.info[_EXCHANGES] = Exchanges(dbapi_connection, observer)


def driver_of(session: Session) -> Driver:
    """The driver of the session's current transaction, made once per transaction: asking
    the session for its connection costs more than most statements the driver then runs.
    Inside `driving`, the driver it set."""
    pinned = session.info.get(_PINNED)
    if pinned is not None:
        return cast(Driver, pinned)
    transaction = session.get_transaction()
    made = session.info.get(_DRIVER)
    if made is not None and made[0] is transaction:
        return cast(Driver, made[1])
    driver = Driver(session.connection())
    session.info[_DRIVER] = (session.get_transaction(), driver)
    return driver


_DRIVER = "ledger.driver"
_PINNED = "ledger.driver.pinned"


@contextmanager
def driving(session: Session, connection: Connection) -> Iterator[Driver]:
    """A driver on `connection`, which `driver_of(session)` returns throughout the block.

    For a unit of work whose transaction runs on the connection itself, with the session
    bound to it and joining that transaction only if ORM code asks it for anything: the
    session then never has to begin a transaction of its own just to hand out the
    connection (`api.db.units.unit_of_work`, every unit of work)."""
    driver = Driver(connection)
    session.info[_PINNED] = driver
    try:
        yield driver
    except BaseException:
        driver.drop_queued()  # the transaction is being rolled back
        raise
    finally:
        del session.info[_PINNED]
