"""One handle on the database: the engine and units of work over it."""

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from sqlalchemy import Engine
from sqlalchemy.orm import Session, sessionmaker

from ledger.database import make_engine


@dataclass(frozen=True, slots=True)
class Database:
    engine: Engine
    sessions: sessionmaker[Session]

    @classmethod
    def connect(cls, url: str) -> "Database":
        engine = make_engine(url)
        return cls(engine, sessionmaker(engine, expire_on_commit=False))

    @property
    def is_postgresql(self) -> bool:
        return self.engine.dialect.name == "postgresql"

    @contextmanager
    def transaction(self) -> Iterator[Session]:
        """A unit of work: committed if the block returns, rolled back if it raises."""
        with self.sessions.begin() as session:
            yield session

    def dispose(self) -> None:
        self.engine.dispose()
