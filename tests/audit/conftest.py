"""Audit tests run on a fresh migrated database (SQLite and PostgreSQL) with the real app."""

from collections.abc import Iterator

import pytest
from litestar import Litestar
from litestar.testing import TestClient

from api.app import create_app
from api.db.database import Database
from api.settings import Settings
from tests.audit.support import Caller, connected, token


@pytest.fixture
def database(database_url: str) -> Iterator[Database]:
    with connected(database_url) as database:
        yield database


@pytest.fixture
def settings(database_url: str) -> Settings:
    return Settings(database_url=database_url)


@pytest.fixture
def client(settings: Settings) -> Iterator[TestClient[Litestar]]:
    with TestClient(app=create_app(settings)) as test_client:
        yield test_client


@pytest.fixture
def auditor(client: TestClient[Litestar], database: Database) -> Caller:
    return Caller(client, token(database, "auditor"))


@pytest.fixture
def operator(client: TestClient[Litestar], database: Database) -> Caller:
    return Caller(client, token(database, "operator"))
