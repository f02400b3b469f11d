"""Report tests: the real app on a fresh database, gaming days in New York from 06:00."""

from collections.abc import Iterator

import pytest
from litestar import Litestar
from litestar.testing import TestClient

from api.app import create_app
from api.db.database import Database
from api.settings import Settings
from tests.audit.support import Caller, connected, token

ZONE = "America/New_York"
START_HOUR = 6


@pytest.fixture
def database(database_url: str) -> Iterator[Database]:
    with connected(database_url) as database:
        yield database


@pytest.fixture
def settings(database_url: str) -> Settings:
    return Settings(
        database_url=database_url, gaming_day_timezone=ZONE, gaming_day_start_hour=START_HOUR
    )


@pytest.fixture
def client(settings: Settings) -> Iterator[TestClient[Litestar]]:
    with TestClient(app=create_app(settings)) as test_client:
        yield test_client


@pytest.fixture
def operator(client: TestClient[Litestar], database: Database) -> Caller:
    return Caller(client, token(database, "operator"))


@pytest.fixture
def auditor(client: TestClient[Litestar], database: Database) -> Caller:
    return Caller(client, token(database, "auditor"))
