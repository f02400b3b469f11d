"""One handle on the database: the engine, and units of work for writing and for reading."""

import threading
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Engine
from sqlalchemy.orm import Session, sessionmaker

from ledger.database import make_engine


@dataclass(frozen=True, slots=True)
class Database:
    engine: Engine
    sessions: sessionmaker[Session]
    readers: sessionmaker[Session]
    writer_turn: AbstractContextManager[object]

    @classmethod
    def connect(cls, url: str, timeout_seconds: float | None = None) -> "Database":
        """`timeout_seconds` bounds every wait on the database: SQLite's busy wait for the
        write lock; PostgreSQL's connection attempt and each statement. A request that
        hits it is a 503 (`api.http.problems`), not a hang."""
        engine = make_engine(url, **_timeouts(url, timeout_seconds))
        is_sqlite = engine.dialect.name == "sqlite"
        # Reads never need SQLite's write lock: WAL gives a deferred transaction a snapshot.
        reader_engine = engine.execution_options(sqlite_begin="DEFERRED")
        return cls(
            engine=engine,
            sessions=sessionmaker(engine, expire_on_commit=False),
            readers=sessionmaker(reader_engine, expire_on_commit=False),
            # SQLite has one writer at a time. Queuing this process's writers on a lock is
            # fair and prompt; left to SQLite's busy handler they poll with growing sleeps,
            # and under load a writer sleeps on long after the lock is free: a slow tail.
            writer_turn=threading.Lock() if is_sqlite else nullcontext(),
        )

    @property
    def is_postgresql(self) -> bool:
        return self.engine.dialect.name == "postgresql"

    @contextmanager
    def transaction(self) -> Iterator[Session]:
        """A unit of work: committed if the block returns, rolled back if it raises."""
        with self.writer_turn, self.sessions.begin() as session:
            yield session

    @contextmanager
    def reading(self) -> Iterator[Session]:
        """A read-only session that never holds SQLite's write lock."""
        with self.readers() as session:
            yield session

    def dispose(self) -> None:
        self.engine.dispose()


def _timeouts(url: str, seconds: float | None) -> dict[str, Any]:
    if seconds is None:
        return {}
    if url.startswith("sqlite"):
        return {"connect_args": {"timeout": seconds}}
    milliseconds = int(seconds * 1000)
    return {
        "connect_args": {
            "connect_timeout": max(1, int(min(seconds, 10))),
            "options": f"-c statement_timeout={milliseconds} -c lock_timeout={milliseconds}",
        }
    }
