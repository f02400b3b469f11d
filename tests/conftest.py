"""Shared fixtures: a fresh, migrated database per test, on SQLite and on PostgreSQL.

Migrating for every test would dominate the suite's run time, so each test session
migrates once into a template, lazily (pure tests never pay for it), and every test gets
a copy: a file copy for SQLite, `CREATE DATABASE ... TEMPLATE` for PostgreSQL. Names are
random, so parallel runs never collide and nothing depends on leftovers.

PostgreSQL runs only when `CASINO_WAR_TEST_POSTGRES_URL` names an admin connection
(e.g. `postgresql://postgres@127.0.0.1:5432/postgres`); otherwise those tests are skipped.
"""

from __future__ import annotations

import os
import shutil
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from hypothesis import settings as hypothesis_settings
from sqlalchemy import Engine, create_engine, make_url, text
from sqlalchemy.orm import Session, sessionmaker
from sqlalchemy.pool import NullPool

import migrations
from api.db.database import Database
from ledger.database import make_engine, normalize_url

POSTGRES_URL_VARIABLE = "CASINO_WAR_TEST_POSTGRES_URL"

# The suite's processes share the CPUs with each other and with the servers they start, so a
# property test's example can take any time: a deadline would fail it for the host's load,
# not for the code (hypothesis reports an example that passes when run again as flaky).
hypothesis_settings.register_profile("casino-war", deadline=None)
hypothesis_settings.load_profile("casino-war")


class _TemplateDatabases:
    """Builds each dialect's migrated template on first use and clones it per test."""

    def __init__(self, tmp_path_factory: pytest.TempPathFactory) -> None:
        self._tmp_path_factory = tmp_path_factory
        self._sqlite_template: Path | None = None
        self._postgres_admin: Engine | None = None
        self._postgres_admin_url = ""
        self._postgres_template: str | None = None

    # SQLite ---------------------------------------------------------------------------
    def sqlite_copy(self, directory: Path) -> str:
        if self._sqlite_template is None:
            path = self._tmp_path_factory.mktemp("sqlite-template") / "template.db"
            migrations.upgrade(f"sqlite:///{path}")  # disposes its engine: WAL checkpointed
            self._sqlite_template = path
        target = directory / "casino-war.db"
        shutil.copyfile(self._sqlite_template, target)
        return f"sqlite:///{target}"

    # PostgreSQL -----------------------------------------------------------------------
    def _admin(self, admin_url: str) -> Engine:
        if self._postgres_admin is None:
            self._postgres_admin_url = admin_url
            self._postgres_admin = create_engine(
                normalize_url(admin_url), isolation_level="AUTOCOMMIT", poolclass=NullPool
            )
        return self._postgres_admin

    def _url_for(self, database: str) -> str:
        url = make_url(self._postgres_admin_url).set(database=database)
        return url.render_as_string(hide_password=False)

    def postgres_create(self, admin_url: str) -> str:
        admin = self._admin(admin_url)
        if self._postgres_template is None:
            template = f"casino_war_template_{uuid.uuid4().hex[:12]}"
            with admin.connect() as connection:
                connection.execute(text(f'CREATE DATABASE "{template}"'))
            self._postgres_template = template  # registered before migrating: always dropped
            migrations.upgrade(self._url_for(template))
        name = f"casino_war_test_{uuid.uuid4().hex[:12]}"
        with admin.connect() as connection:
            connection.execute(
                text(f'CREATE DATABASE "{name}" TEMPLATE "{self._postgres_template}"')
            )
        return self._url_for(name)

    def postgres_clone(self, url: str) -> str:
        """A new database holding what `url`'s holds now (no one may be connected to it)."""
        source = make_url(url).database
        name = f"casino_war_test_{uuid.uuid4().hex[:12]}"
        with self._admin(self._postgres_admin_url).connect() as connection:
            connection.execute(text(f'CREATE DATABASE "{name}" TEMPLATE "{source}"'))
        return self._url_for(name)

    def postgres_drop(self, url: str) -> None:
        database = make_url(url).database
        assert self._postgres_admin is not None
        assert database
        with self._postgres_admin.connect() as connection:
            connection.execute(text(f'DROP DATABASE IF EXISTS "{database}" WITH (FORCE)'))

    def close(self) -> None:
        if self._postgres_admin is None:
            return
        if self._postgres_template is not None:
            with self._postgres_admin.connect() as connection:
                connection.execute(
                    text(f'DROP DATABASE IF EXISTS "{self._postgres_template}" WITH (FORCE)')
                )
        self._postgres_admin.dispose()


@pytest.fixture(scope="session")
def _template_databases(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[_TemplateDatabases]:
    templates = _TemplateDatabases(tmp_path_factory)
    yield templates
    templates.close()


@pytest.fixture(
    params=[pytest.param("sqlite", id="sqlite"), pytest.param("postgresql", id="postgresql")]
)
def database_url(
    request: pytest.FixtureRequest,
    _template_databases: _TemplateDatabases,
    tmp_path: Path,
) -> Iterator[str]:
    """The URL of a fresh database migrated to head (plain `sqlite:///` or `postgresql://`)."""
    if request.param == "sqlite":
        yield _template_databases.sqlite_copy(tmp_path)
        return
    admin_url = os.environ.get(POSTGRES_URL_VARIABLE)
    if not admin_url:
        pytest.skip(f"PostgreSQL tests need {POSTGRES_URL_VARIABLE} (an admin connection URL)")
    url = _template_databases.postgres_create(admin_url)
    try:
        yield url
    finally:
        _template_databases.postgres_drop(url)


@pytest.fixture
def clone_database(
    database_url: str, _template_databases: _TemplateDatabases, tmp_path: Path
) -> Iterator[Callable[[], str]]:
    """Copies `database_url` as it is now into a new database and returns its URL: for
    running the same requests on two databases that start out the same. Nothing may be
    connected to it while it is copied."""
    clones: list[str] = []

    def clone() -> str:
        if database_url.startswith("sqlite"):
            source = Path(make_url(database_url).database or "")
            target = tmp_path / f"clone-{len(clones)}.db"
            shutil.copyfile(source, target)
            clones.append(f"sqlite:///{target}")
        else:
            clones.append(_template_databases.postgres_clone(database_url))
        return clones[-1]

    yield clone
    for url in clones:
        if not url.startswith("sqlite"):
            _template_databases.postgres_drop(url)


@pytest.fixture
def database(database_url: str) -> Iterator[Database]:
    """The service's handle on this test's database (the audit's and the reports' tests
    add the standard table to theirs)."""
    database = Database.connect(database_url)
    yield database
    database.dispose()


@pytest.fixture
def engine(database_url: str) -> Iterator[Engine]:
    engine = make_engine(database_url)
    yield engine
    engine.dispose()


@pytest.fixture
def session_factory(engine: Engine) -> sessionmaker[Session]:
    return sessionmaker(bind=engine, expire_on_commit=False)
