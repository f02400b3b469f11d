"""Engines for the two supported databases: SQLite (embedded default) and PostgreSQL."""

from __future__ import annotations

import sqlite3
import time
from typing import Any

import msgspec
from sqlalchemy import Engine, create_engine, event, make_url
from sqlalchemy.engine import Connection
from sqlalchemy.exc import DBAPIError, InvalidatePoolError
from sqlalchemy.pool import ConnectionPoolEntry

from ledger.driver import send_queued_writes_first

SQLITE_BUSY_TIMEOUT_SECONDS = 60
PING_AFTER_IDLE_SECONDS = 1.0
POOL_SIZE = 10
"""Connections an engine keeps pooled (`make_engine`)."""
_CHECKED_IN_AT = "ledger.database.checked_in_at"


def normalize_url(url: str) -> str:
    """Pin PostgreSQL URLs to psycopg 3, whatever spelling the operator used.

    `postgres://` (Heroku style) and bare `postgresql://` would otherwise pick psycopg2,
    which is not installed. Every other URL, SQLite's included, is returned unchanged.
    """
    for prefix in ("postgresql://", "postgres://"):
        if url.startswith(prefix):
            return "postgresql+psycopg://" + url[len(prefix) :]
    if url.startswith("postgres+psycopg://"):
        return "postgresql+psycopg://" + url[len("postgres+psycopg://") :]
    return url


def make_engine(
    url: str,
    *,
    ping_after_idle_seconds: float = PING_AFTER_IDLE_SECONDS,
    pool_size: int = POOL_SIZE,
    max_overflow: int = 10,
    pool_timeout: float = 30.0,
    **kwargs: Any,
) -> Engine:
    """An engine configured so that concurrent writers queue rather than fail.

    SQLite: WAL (readers never block the writer), foreign keys on, a generous busy
    timeout, and every transaction opened with `BEGIN IMMEDIATE` so that the write lock
    is taken up front; a deferred BEGIN would let two transactions read, then both try to
    upgrade to a write lock, and one would get "database is locked" with no retry.
    PostgreSQL: READ COMMITTED whatever the database's or role's default (a caller may ask
    for another level, as `api.db.snapshot` does per connection), and a normal pool whose
    connections are pinged when they come out of it after sitting idle (`_ping_after_idle`),
    so restarts of the server are survived, and whose statements keep their order with the
    writes the driver queues (`ledger.driver.send_queued_writes_first`).

    The pool keeps up to `pool_size` connections, opened as they are first needed, and
    opens up to `max_overflow` more at a peak, each closed again when it is returned; past
    them a checkout waits up to `pool_timeout` seconds for one to be returned. On
    PostgreSQL each of those is a server process forked, authenticated and ended: with
    SQLAlchemy's five and ten more, 8 clients on 2 workers opened a connection every ten
    hands, and PostgreSQL spent 24% more CPU a hand (docs/performance-log.md, "The
    pool's size"). The service's own engine therefore has no overflow (`api.db.database`).
    """
    url = normalize_url(url)
    kwargs.setdefault("json_serializer", json_text)
    # Statement parameters carry secrets (unrevealed server seeds, token hashes): keep them
    # out of every error message, and so out of every log line.
    kwargs.setdefault("hide_parameters", True)
    in_memory = url.startswith("sqlite") and _in_memory(url)  # a connection per thread
    pooled = "poolclass" not in kwargs and not in_memory
    if pooled:
        kwargs.update(pool_size=pool_size, max_overflow=max_overflow, pool_timeout=pool_timeout)
    if url.startswith("sqlite"):
        connect_args = dict(kwargs.pop("connect_args", {}))
        connect_args.setdefault("timeout", SQLITE_BUSY_TIMEOUT_SECONDS)
        connect_args.setdefault("check_same_thread", False)
        busy_timeout_ms = int(float(connect_args["timeout"]) * 1000)
        # The connection used last is handed out next: its page cache is warm, where a
        # rotation through the pool would make each connection re-read the pages others
        # changed. Writes are serialised, so one connection serves nearly every request.
        if pooled:
            kwargs.setdefault("pool_use_lifo", True)
        engine = create_engine(url, connect_args=connect_args, **kwargs)
        _configure_sqlite(engine, busy_timeout_ms)
        return engine
    return _postgresql_engine(url, ping_after_idle_seconds, kwargs)


def _postgresql_engine(url: str, ping_after_idle_seconds: float, kwargs: dict[str, Any]) -> Engine:
    """`make_engine`'s PostgreSQL engine, `kwargs` its own and SQLAlchemy's."""
    # What a unit of work reads after taking a lock (the Idempotency-Key's advisory lock,
    # a row's FOR UPDATE) must include what the lock's previous holder committed; a
    # database whose default is REPEATABLE READ would read the transaction's first
    # snapshot instead. Reads that want one snapshot ask for it (`api.db.snapshot`).
    kwargs.setdefault("isolation_level", "READ COMMITTED")
    # The driver prepares its statements itself (`ledger.pq_exchange`); psycopg's own would
    # have it drop them all after a rollback.
    connect_args = {**kwargs.pop("connect_args", {}), "prepare_threshold": None}
    engine = create_engine(url, connect_args=connect_args, **kwargs)
    _ping_after_idle(engine, ping_after_idle_seconds)
    send_queued_writes_first(engine)
    return engine


_JSON = msgspec.json.Encoder()


def json_text(value: Any) -> str:
    """A JSON column's text. Every hand writes three or four (its rules, its postings'
    metadata, its Idempotency-Key's answer, a war's burned cards), and msgspec encodes them
    in a fifth of the time `json.dumps` takes. What is stored is only ever read back as
    JSON: the ledger's and the events' hash chains hash their own canonical encodings
    (`ledger.chain`), never this text, and what they store has passed through those first
    (which refuse NaN, that msgspec would write as null)."""
    return _JSON.encode(value).decode()


def _ping_after_idle(engine: Engine, idle_seconds: float) -> None:
    """Ping a pooled connection that has sat idle for `idle_seconds` or more before handing it
    out; one found lost replaces every connection pooled before it.

    SQLAlchemy's pre-ping pings at every checkout: a round trip per unit of work, one of the
    fifteen a PostgreSQL hand made (docs/performance-log.md, "PostgreSQL's round trips"). The
    trade: a connection back at work within the second is not pinged, so after a restart
    that quick the first unit of work on each process fails (a 503, the client retries with
    its key) where pre-ping would have replaced the connection unseen; SQLAlchemy then
    replaces the whole pool on that disconnect, and the requests after it get new
    connections. A connection gone stale while idle (a restart overnight, a firewall's idle
    timeout) is pinged and replaced as before."""

    @event.listens_for(engine, "checkin")
    def _checked_in(_dbapi_connection: Any, record: ConnectionPoolEntry) -> None:
        record.info[_CHECKED_IN_AT] = time.monotonic()

    @event.listens_for(engine, "checkout")
    def _checked_out(dbapi_connection: Any, record: ConnectionPoolEntry, _proxy: Any) -> None:
        checked_in = record.info.get(_CHECKED_IN_AT)
        if checked_in is None or time.monotonic() - checked_in < idle_seconds:
            return  # new, or back at work within the second
        if found_lost(engine, dbapi_connection):
            raise InvalidatePoolError("an idle connection was found lost")


def found_lost(engine: Engine, dbapi_connection: Any) -> bool:
    """Whether a ping finds the connection lost. As SQLAlchemy's pre-ping does, any other
    error is raised: it is the unit of work's to report."""
    dialect = engine.dialect
    try:
        dialect.do_ping(dbapi_connection)
    except dialect.loaded_dbapi.Error as error:
        if dialect.is_disconnect(error, dbapi_connection, None):
            return True
        raise
    return False


def _in_memory(url: str) -> bool:
    return make_url(url).database in (None, "", ":memory:")


def _configure_sqlite(engine: Engine, busy_timeout_ms: int) -> None:
    # The documented pysqlite recipe: stop the driver emitting its own (deferred) BEGIN
    # and emit BEGIN IMMEDIATE ourselves when SQLAlchemy starts a transaction.
    in_memory = _in_memory(str(engine.url))

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: sqlite3.Connection, _record: ConnectionPoolEntry) -> None:
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        try:
            if not in_memory:
                cursor.execute("PRAGMA journal_mode=WAL")
                cursor.execute("PRAGMA synchronous=NORMAL")
            cursor.execute("PRAGMA foreign_keys=ON")
            cursor.execute(f"PRAGMA busy_timeout={busy_timeout_ms}")
        finally:
            cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(connection: Connection) -> None:
        # A long read-only pass (the verifier, reports) may opt out of the write lock with
        # `connection.execution_options(sqlite_begin="DEFERRED")`.
        mode = connection.get_execution_options().get("sqlite_begin", "IMMEDIATE")
        if mode not in ("IMMEDIATE", "DEFERRED", "EXCLUSIVE"):
            raise ValueError(f"unknown SQLite BEGIN mode {mode!r}")
        _begin_on_driver(connection, f"BEGIN {mode}")


def _begin_on_driver(connection: Connection, statement: str) -> None:
    """Run `statement` on the driver's connection.

    Every unit of work begins here, and `exec_driver_sql` costs a unit of work about
    25 µs of execution context for a statement that SQLite runs in one or two
    (docs/performance-log.md). What its failure must be is kept: wrapped in SQLAlchemy's
    exception family (so that a locked database is a 503), and the connection invalidated
    where the error says it is gone (so that `SqliteWriter` opens another). What is not:
    `handle_error` listeners (there are none), the statement echoed when `echo` is on, and
    the pool invalidated as a whole on a disconnect (a SQLite file has no server to restart).
    """
    driver_connection = connection.connection.driver_connection
    try:
        driver_connection.execute(statement)  # type: ignore[union-attr]
    except sqlite3.Error as error:
        dialect = connection.dialect
        # SQLAlchemy types the error as its DBAPI protocol's, which sqlite3's is.
        dbapi_error: Any = error
        gone = dialect.is_disconnect(dbapi_error, connection.connection.dbapi_connection, None)
        if gone:
            connection.invalidate(error)
        raise DBAPIError.instance(
            statement,
            None,
            error,
            sqlite3.Error,
            hide_parameters=True,
            dialect=dialect,
            connection_invalidated=gone,
        ) from error
