"""Scratch databases: a fresh one per measurement, always removed afterwards.

SQLite databases are files in a temporary directory; PostgreSQL databases get random
names on the server named by an admin URL, and are dropped (with FORCE) on exit.
"""

import os
import shutil
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy import create_engine, make_url, text
from sqlalchemy.engine import URL
from sqlalchemy.pool import NullPool

from ledger.database import normalize_url

DEFAULT_POSTGRES_URL = "postgresql://postgres@127.0.0.1:5432/postgres"


def admin_url(given: str | None) -> str:
    """The PostgreSQL server to measure on: `given` (a `--postgres-url`), else
    `$CASINO_WAR_BENCH_POSTGRES_URL`, else the tests' `$CASINO_WAR_TEST_POSTGRES_URL`, else
    this machine's default."""
    return (
        given
        or os.environ.get("CASINO_WAR_BENCH_POSTGRES_URL")
        or os.environ.get("CASINO_WAR_TEST_POSTGRES_URL")
        or DEFAULT_POSTGRES_URL
    )


@dataclass(frozen=True, slots=True)
class PostgresServer:
    """An admin connection to a PostgreSQL server on which scratch databases are made."""

    admin_url: str

    def _url(self) -> URL:
        return make_url(normalize_url(self.admin_url))

    def url_for(self, database: str) -> str:
        return self._url().set(database=database).render_as_string(hide_password=False)

    def version(self) -> str:
        engine = create_engine(self._url(), poolclass=NullPool)
        try:
            with engine.connect() as connection:
                return str(connection.execute(text("SHOW server_version")).scalar_one())
        finally:
            engine.dispose()

    @contextmanager
    def scratch(self, purpose: str) -> Iterator[str]:
        """A new empty database, yielded as its URL, dropped afterwards."""
        name = f"casino_war_bench_{purpose}_{uuid.uuid4().hex[:10]}"
        engine = create_engine(self._url(), isolation_level="AUTOCOMMIT", poolclass=NullPool)
        try:
            with engine.connect() as connection:
                connection.execute(text(f'CREATE DATABASE "{name}"'))
            try:
                yield self.url_for(name)
            finally:
                with engine.connect() as connection:
                    connection.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        finally:
            engine.dispose()


def find_postgres(admin_url: str | None) -> tuple[PostgresServer | None, str | None]:
    """The server if it answers, else None and why (PostgreSQL figures become unavailable)."""
    if admin_url is None:
        return None, "no PostgreSQL URL given"
    server = PostgresServer(admin_url)
    try:
        server.version()
    except Exception as error:  # any failure to connect means "not measured", never a crash
        return None, f"PostgreSQL does not answer at {server._url()!r}: {error}".splitlines()[0]
    return server, None


@contextmanager
def sqlite_scratch(purpose: str) -> Iterator[str]:
    """A URL of a SQLite file in a fresh temporary directory, removed afterwards."""
    directory = Path(tempfile.mkdtemp(prefix=f"casino-war-bench-{purpose}-"))
    try:
        yield f"sqlite:///{directory / 'bench.db'}"
    finally:
        shutil.rmtree(directory, ignore_errors=True)


@contextmanager
def scratch_database(database: str, postgres: PostgresServer | None, purpose: str) -> Iterator[str]:
    """A fresh database of kind `database` ("sqlite" or "postgresql")."""
    if database == "sqlite":
        with sqlite_scratch(purpose) as url:
            yield url
        return
    if postgres is None:
        raise RuntimeError("PostgreSQL is not available")
    with postgres.scratch(purpose) as url:
        yield url
