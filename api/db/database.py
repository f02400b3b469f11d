"""One handle on the database: the engine, and units of work for writing and for reading."""

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, TypeVar

from sqlalchemy import Engine, text
from sqlalchemy.exc import DBAPIError
from sqlalchemy.orm import Session, sessionmaker
from sqlalchemy.pool import NullPool

from api.db.kept import KeptConnection, Reads, SqliteWriter
from api.db.loop_units import LoopUnits, kept_on_this_turn, open_connections_off_the_loop
from api.db.threads import in_command_thread
from api.db.units import joining_session, unit_of_work
from ledger.database import POOL_SIZE, make_engine
from ledger.driver import driver_of

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Database:
    engine: Engine
    readers: sessionmaker[Session]
    sqlite_writer: SqliteWriter | None
    loop_units: LoopUnits | None
    prober: Engine
    sqlite_units_on_loop: bool
    """Whether SQLite's units of work run on the event loop itself (`run_units`)."""

    @classmethod
    def connect(
        cls,
        url: str,
        timeout_seconds: float | None = None,
        pool_size: int = POOL_SIZE,
        *,
        server_processes: int = 1,
    ) -> "Database":
        """`timeout_seconds` bounds every wait on the database: SQLite's busy wait for the
        write lock; PostgreSQL's connection attempt and each statement; a connection from
        the pool. A request that hits it is a 503 (`api.http.problems`), not a hang.

        The pool holds at most `pool_size` connections, and on SQLite one more, for the
        connection `SqliteWriter` keeps: a unit of work past them waits for one to be
        returned. Without that bound a pool opens a connection at every peak and closes it
        again, on PostgreSQL a server process each (`ledger.database.make_engine`); with
        it, PostgreSQL sees a known number of connections per server process. The server
        never runs more units of work at once than the pool holds (`api.db.threads`), so
        none of them waits for a connection there. The readiness probe's connection
        (`probe`) is outside the pool: one more, while a probe runs.

        `server_processes` is how many server processes share the database. On SQLite
        served by one, units of work run on the event loop (`run_units`): its write lock is
        then only ever held briefly, by this process or a command-line tool, and a hop to
        a thread and back costs more CPU than the unit of work. The command-line tools run
        no units through `run_units`, and leave it at one."""
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
        if not is_sqlite:
            open_connections_off_the_loop(engine)
        return cls(
            engine=engine,
            readers=sessionmaker(reader_engine, expire_on_commit=False),
            sqlite_writer=SqliteWriter(engine) if is_sqlite else None,
            loop_units=None if is_sqlite else LoopUnits(engine),
            prober=prober.execution_options(sqlite_begin="DEFERRED"),
            sqlite_units_on_loop=is_sqlite and server_processes == 1,
        )

    @property
    def is_postgresql(self) -> bool:
        return self.engine.dialect.name == "postgresql"

    @property
    def units_run_in_threads(self) -> bool:
        """Whether `run_units` needs command threads (`api.db.threads`): only SQLite shared
        by several server processes, whose write lock the loop must never wait for."""
        return self.loop_units is None and not self.sqlite_units_on_loop

    async def run_units(self, work: Callable[[], T]) -> T:
        """`work()`, a request's units of work (a command, a token's look-up), where they
        cost least: on SQLite served by one process on the event loop, right here (a
        token looked up there cost 113 µs of CPU in process, against 190-214 through a
        command thread: docs/performance-log.md, "A token looked up on the hot path"); on
        PostgreSQL on the event loop too, on a kept connection of its own, its waits for
        the network the loop's, so that it serves other requests meanwhile (`LoopUnits`,
        once the server has started them on this loop); else in a command thread
        (`api.db.threads`)."""
        if self.sqlite_units_on_loop:
            return work()
        if self.loop_units is not None and self.loop_units.started:
            return await self.loop_units.run(work)
        return await in_command_thread(work)

    @contextmanager
    def transaction(self) -> Iterator[Session]:
        """A unit of work: committed if the block returns, rolled back if it raises.

        On SQLite it runs on the writer's kept connection (`SqliteWriter`); on PostgreSQL on
        the connection its turn on the event loop holds (`LoopUnits`), else on one from the
        pool; either way as `api.db.units.unit_of_work` runs it."""
        if self.sqlite_writer is not None:
            with self.sqlite_writer.transaction() as session:
                yield session
        elif (kept := self._kept_on_this_turn()) is not None:
            with kept.transaction() as session:
                yield session
        else:
            with (
                self.engine.connect() as connection,
                unit_of_work(connection, joining_session(connection)) as session,
            ):
                yield session

    @contextmanager
    def reading(self) -> Iterator[Session]:
        """A read-only session that never holds SQLite's write lock.

        On PostgreSQL its transaction is READ ONLY and ends by COMMIT, not by the ROLLBACK
        that closing it would send. That kept the statements psycopg had prepared, which it
        forgets on a rollback (docs/performance-log.md, "PostgreSQL's prepared statements
        and the chain head's plan"); the driver now prepares its own, which a rollback
        keeps, and psycopg none (`ledger.pq_exchange`), and the COMMIT, which costs what the
        ROLLBACK would, stays. A read refused on the way (an unknown token, a hand not
        found) ends by COMMIT too. Only a read the database failed rolls back, as it must.

        On the event loop on PostgreSQL the read runs on its turn's kept connection, the same
        way: a read there must not wait on the loop for a connection from the pool."""
        if (kept := self._kept_on_this_turn()) is not None:
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

    @contextmanager
    def reading_alone(self) -> Iterator[Reads]:
        """Reads of one statement each, which need no transaction around them: on the event
        loop on PostgreSQL each runs alone, one round trip (`KeptConnection.alone`);
        elsewhere inside a read as `reading` runs one."""
        if (kept := self._kept_on_this_turn()) is not None:
            with kept.alone() as driver:
                yield driver
            return
        with self.reading() as session:
            yield driver_of(session)

    def _kept_on_this_turn(self) -> KeptConnection | None:
        return kept_on_this_turn(self.loop_units) if self.loop_units is not None else None

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
        if self.loop_units is not None:
            self.loop_units.close()
        self.engine.dispose()
        self.prober.dispose()


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
