"""Audit tests run on a fresh migrated database (SQLite and PostgreSQL) with the real app."""

from collections.abc import Iterator
from typing import Any

import pytest
from litestar import Litestar
from litestar.testing import TestClient

from api.app import create_app
from api.db.database import Database
from api.settings import Settings
from tests.audit.support import (
    Caller,
    connected,
    decide,
    deposit,
    new_player,
    play_settled,
    play_tie,
    token,
)


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


@pytest.fixture
def played(database: Database) -> dict[str, Any]:
    """A small casino day: settled hands (war and surrender, tie bets) and one open tie."""
    player = new_player(database)
    settled = [
        play_settled(
            database,
            player,
            tie_bet=100 if i % 3 == 0 else 0,
            action="war" if i % 2 else "surrender",
        )
        for i in range(30)
    ]
    war = play_tie(database, player, tie_bet=200)
    deposit(database, player, 7_000)  # the wallet moves while the tie awaits the decision
    war = decide(database, war.id, player, "war")
    surrendered = decide(database, play_tie(database, player).id, player, "surrender")
    open_tie = play_tie(database, player)
    return {
        "player": player,
        "settled": settled,
        "war": war,
        "surrendered": surrendered,
        "open": open_tie,
    }
