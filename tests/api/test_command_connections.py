"""PostgreSQL: each command thread keeps one connection for its units of work and its reads,
pings it after it has sat idle, and replaces it when lost; every other thread, and a unit of
work begun while the thread's own connection is at work, takes one from the pool."""

import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from litestar import Litestar
from litestar.testing import TestClient
from sqlalchemy import text
from sqlalchemy.exc import DBAPIError
from sqlalchemy.orm import Session

from api.db.database import Database
from ledger.database import PING_AFTER_IDLE_SECONDS
from tests.api.conftest import Caller, new_player, play_until, standard_table_id

pytestmark = pytest.mark.parametrize("database_url", ["postgresql"], indirect=True)

InCommandThread = Callable[[Callable[[], Any]], Any]


@pytest.fixture
def command_thread(database: Database) -> Iterator[InCommandThread]:
    """Runs a function in a thread that keeps a connection, as the server's command threads
    do (`api.db.threads`)."""
    connections = database.command_connections
    assert connections is not None
    with ThreadPoolExecutor(1, initializer=connections.keep_one_in_this_thread) as thread:
        yield lambda work: thread.submit(work).result(timeout=30)


def _backend_of(session: Session) -> int:
    return int(session.execute(text("SELECT pg_backend_pid()")).scalar_one())


def _unit_of_work_backend(database: Database) -> int:
    with database.transaction() as session:
        return _backend_of(session)


def _read_backend(database: Database) -> int:
    with database.reading() as session:
        return _backend_of(session)


def _end_backend(database: Database, backend: int) -> None:
    with database.prober.connect() as connection:
        connection.execute(text("SELECT pg_terminate_backend(:pid)"), {"pid": backend})


def _lose_the_connection_at_work(database: Database) -> None:
    with database.transaction() as session:
        _end_backend(database, _backend_of(session))
        session.execute(text("SELECT 1"))


def _count_players(database: Database) -> int:
    with database.reading() as session:
        return int(session.execute(text("SELECT count(*) FROM players")).scalar_one())


def _add_player(database: Database) -> None:
    with database.transaction() as session:
        session.execute(
            text("INSERT INTO players (display_name, created_at) VALUES ('Ada', '2026-11-26')")
        )


def test_a_command_threads_units_of_work_and_reads_share_its_one_connection(
    database: Database, command_thread: InCommandThread
) -> None:
    backends = {
        command_thread(lambda: _unit_of_work_backend(database)),
        command_thread(lambda: _unit_of_work_backend(database)),
        command_thread(lambda: _read_backend(database)),
    }
    assert len(backends) == 1


def test_a_thread_that_keeps_no_connection_takes_one_from_the_pool(
    database: Database, command_thread: InCommandThread
) -> None:
    kept = command_thread(lambda: _unit_of_work_backend(database))
    assert _unit_of_work_backend(database) != kept


def test_a_unit_of_work_begun_inside_another_takes_a_pooled_connection(
    database: Database, command_thread: InCommandThread
) -> None:
    def nested() -> tuple[int, int]:
        with database.transaction() as outer:
            return _backend_of(outer), _unit_of_work_backend(database)

    outer, inner = command_thread(nested)
    assert outer != inner


def test_a_read_on_the_kept_connection_is_read_only_and_the_next_unit_of_work_commits(
    database: Database, command_thread: InCommandThread
) -> None:
    def write_while_reading() -> None:
        with database.reading() as session:
            session.execute(
                text("INSERT INTO players (display_name, created_at) VALUES ('Bo', '2026-11-26')")
            )

    with pytest.raises(DBAPIError, match="read-only transaction"):
        command_thread(write_while_reading)
    command_thread(lambda: _add_player(database))
    assert _count_players(database) == 1


def test_a_read_refused_on_the_way_leaves_the_kept_connection_ready_for_the_next_unit_of_work(
    database: Database, command_thread: InCommandThread
) -> None:
    def refused_read() -> None:
        with database.reading() as session:
            session.execute(text("SELECT 1"))
            raise LookupError("not found")

    with pytest.raises(LookupError):
        command_thread(refused_read)
    command_thread(lambda: _add_player(database))
    assert _count_players(database) == 1


def test_a_kept_connection_lost_while_idle_is_pinged_and_replaced_unseen(
    database: Database, command_thread: InCommandThread
) -> None:
    lost = command_thread(lambda: _unit_of_work_backend(database))
    _end_backend(database, lost)
    time.sleep(PING_AFTER_IDLE_SECONDS + 0.1)
    assert command_thread(lambda: _unit_of_work_backend(database)) != lost


def test_a_kept_connection_lost_at_work_fails_that_unit_of_work_and_is_replaced(
    database: Database, command_thread: InCommandThread
) -> None:
    with pytest.raises(DBAPIError):
        command_thread(lambda: _lose_the_connection_at_work(database))
    command_thread(lambda: _add_player(database))
    assert _count_players(database) == 1


def test_a_pooled_connection_lost_at_work_fails_that_unit_of_work_as_a_lost_connection(
    database: Database,
) -> None:
    """Not as a `PendingRollbackError` from the rollback's own listeners, which the service
    would answer with a 500 instead of a 503."""
    with pytest.raises(DBAPIError) as failed:
        _lose_the_connection_at_work(database)
    assert failed.value.connection_invalidated
    _add_player(database)
    assert _count_players(database) == 1


def test_closing_the_database_closes_every_kept_connection(
    database: Database, command_thread: InCommandThread
) -> None:
    command_thread(lambda: _unit_of_work_backend(database))
    pool = database.engine.pool
    assert pool.checkedout() == 1  # type: ignore[attr-defined]
    database.dispose()
    assert pool.checkedout() == 0  # type: ignore[attr-defined]


def test_a_servers_hands_run_on_its_command_threads_kept_connections(
    client: TestClient[Litestar], operator: Caller
) -> None:
    database: Database = client.app.state.database
    player, _ = new_player(operator, deposit=10_000)
    table_id = standard_table_id(player)
    for _ in range(5):
        play_until(player, table_id, "settled")
    in_use: int = database.engine.pool.checkedout()  # type: ignore[attr-defined]
    command_threads = database.engine.pool.size() - database.engine.pool.size() // 2  # type: ignore[attr-defined]
    assert 1 <= in_use <= command_threads


def _end_the_servers_connections(database: Database) -> None:
    with database.prober.connect() as connection:
        connection.execute(
            text(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                " WHERE datname = current_database() AND pid <> pg_backend_pid()"
            )
        )


def test_a_hand_whose_connection_is_lost_is_a_503_and_its_retry_is_served(
    client: TestClient[Litestar], operator: Caller
) -> None:
    database: Database = client.app.state.database
    player, _ = new_player(operator, deposit=10_000)
    table_id = standard_table_id(player)
    play_until(player, table_id, "settled")
    _end_the_servers_connections(database)
    hand = {"table_id": table_id, "bet": 100}
    lost = player.post("/v1/hands", hand, key="lost-connection")
    retried = player.post("/v1/hands", hand, key="lost-connection")
    assert (lost.status_code, lost.json()["code"]) == (503, "service_unavailable")
    assert retried.status_code == 201
