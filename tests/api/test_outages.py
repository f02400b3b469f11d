"""A database that does not answer is a 503 with Retry-After, never a 500, and the service
recovers by itself: PostgreSQL cut off through a real TCP proxy, a private PostgreSQL server
stopped and started again, SQLite held locked and a PostgreSQL row held locked by another
connection past the timeout."""

import sqlite3
from collections.abc import Iterator

import pytest
from litestar import Litestar
from litestar.testing import TestClient
from sqlalchemy import text
from sqlalchemy.engine import make_url

import migrations
from api.app import create_app
from api.domain.tokens.service import Role
from api.settings import Settings
from ledger.database import make_engine
from tests.api.conftest import Caller, issue_test_token
from tests.api.private_postgres import PrivatePostgres
from tests.api.proxy import CuttableProxy


@pytest.fixture
def proxied_postgres(database_url: str) -> Iterator[tuple[str, CuttableProxy]]:
    if not database_url.startswith("postgresql"):
        pytest.skip("the proxy stands between the service and a PostgreSQL server")
    url = make_url(database_url)
    proxy = CuttableProxy(url.host or "127.0.0.1", url.port or 5432)
    try:
        yield url.set(host="127.0.0.1", port=proxy.port).render_as_string(False), proxy
    finally:
        proxy.close()


def _operator(client: TestClient[Litestar], url: str) -> Caller:
    return Caller(client, issue_test_token(Settings(database_url=url), Role.OPERATOR))


@pytest.fixture
def proxied_service(
    proxied_postgres: tuple[str, CuttableProxy],
) -> Iterator[tuple[TestClient[Litestar], Caller, CuttableProxy]]:
    """The service on PostgreSQL through the proxy, a database wait bounded at 3 s, and an
    operator."""
    url, proxy = proxied_postgres
    settings = Settings(database_url=url, database_timeout_seconds=3)
    with TestClient(app=create_app(settings)) as client:
        yield client, _operator(client, url), proxy


def test_postgresql_unreachable_is_a_503_and_the_service_recovers(
    proxied_service: tuple[TestClient[Litestar], Caller, CuttableProxy],
) -> None:
    client, operator, proxy = proxied_service
    assert operator.get("/v1/tables").status_code == 200
    proxy.cut()
    refused = operator.post("/v1/players", {"display_name": "during the outage"})
    assert refused.status_code == 503
    assert refused.json()["code"] == "service_unavailable"
    assert int(refused.headers["retry-after"]) > 0
    assert client.get("/ready").status_code == 503
    proxy.restore()
    assert client.get("/ready").status_code == 200
    assert operator.post("/v1/players", {"display_name": "after"}).status_code == 201


def test_a_hand_whose_token_must_be_looked_up_during_an_outage_is_a_503(
    proxied_service: tuple[TestClient[Litestar], Caller, CuttableProxy],
) -> None:
    client, operator, proxy = proxied_service
    created = operator.post("/v1/players", {"display_name": "never seen"}).json()
    table_id = operator.get("/v1/tables").json()["items"][0]["id"]
    player = Caller(client, created["token"])  # not in the authenticator's memory
    proxy.cut()
    refused = player.post("/v1/hands", {"table_id": table_id, "bet": 100})
    assert refused.status_code == 503
    assert refused.json()["code"] == "service_unavailable"
    assert int(refused.headers["retry-after"]) > 0
    assert "cw_" not in refused.text


def test_a_sqlite_database_locked_past_the_timeout_is_a_503_and_moves_nothing(
    database_url: str,
) -> None:
    if not database_url.startswith("sqlite"):
        pytest.skip("SQLite's write lock")
    settings = Settings(database_url=database_url, database_timeout_seconds=0.5)
    with TestClient(app=create_app(settings)) as client:
        operator = _operator(client, database_url)
        before = operator.post("/v1/players", {"display_name": "before"}).json()["id"]
        holder = sqlite3.connect(make_url(database_url).database or "", isolation_level=None)
        holder.execute("BEGIN IMMEDIATE")
        try:
            refused = operator.post("/v1/players", {"display_name": "locked out"})
            assert refused.status_code == 503
            assert refused.headers["retry-after"]
        finally:
            holder.execute("ROLLBACK")
            holder.close()
        after = operator.post("/v1/players", {"display_name": "after"}).json()["id"]
        assert after == before + 1


def test_a_postgresql_row_locked_past_the_timeout_is_a_503_and_moves_nothing(
    database_url: str,
) -> None:
    if not database_url.startswith("postgresql"):
        pytest.skip("PostgreSQL's lock timeout")
    settings = Settings(database_url=database_url, database_timeout_seconds=0.5)
    with TestClient(app=create_app(settings)) as client:
        operator = _operator(client, database_url)
        player_id = operator.post("/v1/players", {"display_name": "held"}).json()["id"]
        deposit = {"player_id": player_id, "amount": 500, "currency": "USD"}
        holder = make_engine(database_url)
        try:
            with holder.begin() as locking:  # another session holds the player's row
                locking.execute(
                    text("SELECT id FROM players WHERE id = :id FOR UPDATE"), {"id": player_id}
                )
                refused = operator.post("/v1/cashier/deposits", deposit)
                assert refused.status_code == 503, refused.text
                assert refused.json()["code"] == "service_unavailable"
                assert refused.headers["retry-after"]
        finally:
            holder.dispose()
        accepted = operator.post("/v1/cashier/deposits", deposit)
        assert accepted.status_code == 201
        assert accepted.json()["balance_after"] == 500  # the refused deposit moved nothing


@pytest.fixture
def private_postgres(database_url: str) -> Iterator[PrivatePostgres]:
    if not database_url.startswith("postgresql"):
        pytest.skip("a PostgreSQL restart")
    server = PrivatePostgres()
    reason = server.unavailable()
    if reason is not None:
        pytest.skip(reason)
    server.start()
    try:
        migrations.upgrade(server.url)
        yield server
    finally:
        server.remove()


def test_a_postgresql_restart_is_a_503_during_and_nothing_after(
    private_postgres: PrivatePostgres,
) -> None:
    url = private_postgres.url
    settings = Settings(database_url=url, database_timeout_seconds=3)
    with TestClient(app=create_app(settings)) as client:
        operator = _operator(client, url)
        assert operator.post("/v1/players", {"display_name": "before"}).status_code == 201
        private_postgres.stop()
        during = operator.post("/v1/players", {"display_name": "during"})
        assert during.status_code == 503 and during.headers["retry-after"]
        assert client.get("/ready").status_code == 503
        private_postgres.start()
        private_postgres.wait_until_up()
        assert client.get("/ready").status_code == 200
        after = operator.post("/v1/players", {"display_name": "after"})
        assert after.status_code == 201
        assert after.json()["id"] == 2  # the refused request created nothing
