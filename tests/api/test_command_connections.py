"""PostgreSQL: each command thread keeps one connection for its units of work and its reads,
pings it after it has sat idle or once another kept connection was found lost, and replaces
it when lost; every other thread, and a unit of work begun while the thread's own connection
is at work, takes one from the pool."""

import dataclasses
import os
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any

import pytest
from litestar import Litestar
from litestar.testing import TestClient
from sqlalchemy import create_engine, event, text
from sqlalchemy.exc import DBAPIError
from sqlalchemy.orm import Session
from sqlalchemy.pool import NullPool

from api.db.database import Database
from api.db.kept import CommandConnections
from api.db.threads import thread_shares
from api.settings import Settings
from ledger.database import normalize_url
from ledger.driver import Sql, driver_of
from tests.api.conftest import Caller, new_player, play_until, standard_table_id
from tests.conftest import POSTGRES_URL_VARIABLE

pytestmark = pytest.mark.parametrize("database_url", ["postgresql"], indirect=True)

InCommandThread = Callable[[Callable[[], Any]], Any]

IDLE_LIMIT_SECONDS = 0.05
"""The tests' idle limit before a ping, in place of the service's second."""


@contextmanager
def _pinged_after(database: Database, idle_seconds: float) -> Iterator[Database]:
    """The service's handle, its command threads' connections pinged after `idle_seconds`
    idle (or on news of a loss)."""
    connections = CommandConnections(database.engine, idle_seconds)
    kept = dataclasses.replace(database, command_connections=connections)
    yield kept
    kept.dispose()


@pytest.fixture
def kept_database(database: Database) -> Iterator[Database]:
    with _pinged_after(database, IDLE_LIMIT_SECONDS) as kept:
        yield kept


@pytest.fixture
def pinged_only_on_news(database: Database) -> Iterator[Database]:
    """The idle limit an hour: only news of a loss has a kept connection pinged."""
    with _pinged_after(database, 3600) as kept:
        yield kept


@contextmanager
def _command_thread(database: Database) -> Iterator[InCommandThread]:
    """A thread that keeps a connection, as the server's command threads do
    (`api.db.threads`): runs a function there and returns what it returns."""
    connections = database.command_connections
    assert connections is not None
    with ThreadPoolExecutor(1, initializer=connections.keep_one_in_this_thread) as thread:
        yield lambda work: thread.submit(work).result(timeout=30)


@pytest.fixture
def command_thread(kept_database: Database) -> Iterator[InCommandThread]:
    with _command_thread(kept_database) as run:
        yield run


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


_TERMINATE_EVERY_OTHER_BACKEND = (
    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
    " WHERE datname = current_database() AND pid <> pg_backend_pid()"
)


def _end_every_other_backend(database: Database) -> None:
    with database.prober.connect() as connection:
        connection.execute(text(_TERMINATE_EVERY_OTHER_BACKEND))


def _lose_the_connection_at_work(database: Database) -> None:
    with database.transaction() as session:
        _end_backend(database, _backend_of(session))
        session.execute(text("SELECT 1"))


def _add_player(database: Database) -> None:
    with database.transaction() as session:
        session.execute(
            text("INSERT INTO players (display_name, created_at) VALUES ('Ada', '2026-11-26')")
        )


def _count_players(database: Database) -> int:
    with database.reading() as session:
        return int(session.execute(text("SELECT count(*) FROM players")).scalar_one())


def _assert_the_next_unit_of_work_commits(
    database: Database, command_thread: InCommandThread
) -> None:
    command_thread(lambda: _add_player(database))
    assert _count_players(database) == 1


def _write_while_reading(database: Database) -> None:
    with database.reading() as session:
        session.execute(
            text("INSERT INTO players (display_name, created_at) VALUES ('Bo', '2026-11-26')")
        )


def test_a_command_threads_units_of_work_and_reads_share_its_one_connection(
    kept_database: Database, command_thread: InCommandThread
) -> None:
    backends = {
        command_thread(lambda: _unit_of_work_backend(kept_database)),
        command_thread(lambda: _unit_of_work_backend(kept_database)),
        command_thread(lambda: _read_backend(kept_database)),
    }
    assert len(backends) == 1


def test_a_thread_that_keeps_no_connection_takes_one_from_the_pool(
    kept_database: Database, command_thread: InCommandThread
) -> None:
    kept = command_thread(lambda: _unit_of_work_backend(kept_database))
    assert _unit_of_work_backend(kept_database) != kept


def test_a_unit_of_work_begun_inside_another_takes_a_pooled_connection(
    kept_database: Database, command_thread: InCommandThread
) -> None:
    def nested() -> tuple[int, int]:
        with kept_database.transaction() as outer:
            return _backend_of(outer), _unit_of_work_backend(kept_database)

    outer, inner = command_thread(nested)
    assert outer != inner


def test_a_read_on_the_kept_connection_refuses_writes(
    kept_database: Database, command_thread: InCommandThread
) -> None:
    with pytest.raises(DBAPIError, match="read-only transaction"):
        command_thread(lambda: _write_while_reading(kept_database))


def test_a_unit_of_work_after_a_read_on_the_kept_connection_writes(
    kept_database: Database, command_thread: InCommandThread
) -> None:
    command_thread(lambda: _read_backend(kept_database))
    _assert_the_next_unit_of_work_commits(kept_database, command_thread)


def test_a_unit_of_work_after_a_refused_write_in_a_read_commits(
    kept_database: Database, command_thread: InCommandThread
) -> None:
    with pytest.raises(DBAPIError):
        command_thread(lambda: _write_while_reading(kept_database))
    _assert_the_next_unit_of_work_commits(kept_database, command_thread)


def test_a_read_refused_on_the_way_ends_by_commit(
    kept_database: Database, command_thread: InCommandThread
) -> None:
    ended: list[str] = []

    def refused_read() -> None:
        with kept_database.reading() as session:
            session.execute(text("SELECT 1"))
            raise LookupError("not found")

    event.listen(kept_database.engine, "commit", lambda _: ended.append("commit"))
    event.listen(kept_database.engine, "rollback", lambda _: ended.append("rollback"))
    with pytest.raises(LookupError):
        command_thread(refused_read)
    assert ended == ["commit"]


def test_a_read_whose_commit_fails_leaves_the_kept_connection_ready_for_a_unit_of_work(
    kept_database: Database, command_thread: InCommandThread
) -> None:
    def read_failing_at_commit() -> None:
        with kept_database.reading() as session:
            driver_of(session).execute(Sql.of("SELECT 1 / 0"), {})  # sent with the COMMIT

    with pytest.raises(DBAPIError, match="division by zero"):
        command_thread(read_failing_at_commit)
    _assert_the_next_unit_of_work_commits(kept_database, command_thread)


def test_a_read_that_cannot_be_cleaned_up_has_its_connection_replaced(
    kept_database: Database, command_thread: InCommandThread
) -> None:
    """A rollback that fails after a failed read: the next unit of work gets a new
    connection instead of one whose state nobody knows."""
    failed_rollbacks: list[object] = []

    def fail_the_first_rollback(connection: object) -> None:
        if not failed_rollbacks:
            failed_rollbacks.append(connection)
            raise RuntimeError("the rollback failed")

    def read_and_fail() -> int:
        event.listen(kept_database.engine, "rollback", fail_the_first_rollback)
        try:
            with kept_database.reading() as session:
                backend = _backend_of(session)
                session.execute(text("SELECT 1 / 0"))
        except DBAPIError:
            return backend
        finally:
            event.remove(kept_database.engine, "rollback", fail_the_first_rollback)
        raise AssertionError("the read did not fail")

    replaced = command_thread(read_and_fail)
    assert failed_rollbacks
    assert command_thread(lambda: _unit_of_work_backend(kept_database)) != replaced


def test_a_kept_connection_lost_while_idle_is_pinged_and_replaced_unseen(
    kept_database: Database, command_thread: InCommandThread
) -> None:
    lost = command_thread(lambda: _unit_of_work_backend(kept_database))
    _end_backend(kept_database, lost)
    time.sleep(IDLE_LIMIT_SECONDS * 2)
    assert command_thread(lambda: _unit_of_work_backend(kept_database)) != lost


def test_a_kept_connection_lost_at_work_fails_that_unit_of_work_and_is_replaced(
    kept_database: Database, command_thread: InCommandThread
) -> None:
    with pytest.raises(DBAPIError):
        command_thread(lambda: _lose_the_connection_at_work(kept_database))
    _assert_the_next_unit_of_work_commits(kept_database, command_thread)


def test_one_kept_connection_found_lost_has_the_others_pinged_before_they_next_work(
    pinged_only_on_news: Database,
) -> None:
    database = pinged_only_on_news
    with _command_thread(database) as first, _command_thread(database) as second:
        first(lambda: _unit_of_work_backend(database))
        lost = second(lambda: _unit_of_work_backend(database))
        _end_every_other_backend(database)
        with pytest.raises(DBAPIError):
            first(lambda: _unit_of_work_backend(database))
        assert second(lambda: _unit_of_work_backend(database)) != lost


@contextmanager
def _closed_to_new_connections(database: Database) -> Iterator[None]:
    """The database refuses new connections, and has none left, until the block ends. The
    admin's connection is to the server's admin database: a database cannot refuse
    connections while its own session asks."""
    name = database.engine.url.database
    admin = create_engine(normalize_url(os.environ[POSTGRES_URL_VARIABLE]), poolclass=NullPool)
    with admin.connect() as connection:
        connection.execute(text(f'ALTER DATABASE "{name}" ALLOW_CONNECTIONS false'))
        connection.execute(
            text("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = :name"),
            {"name": name},
        )
        connection.commit()
        try:
            yield
        finally:
            connection.execute(text(f'ALTER DATABASE "{name}" ALLOW_CONNECTIONS true'))
            connection.commit()
    admin.dispose()


def test_a_connection_that_cannot_be_opened_has_the_kept_ones_pinged_before_they_next_work(
    pinged_only_on_news: Database,
) -> None:
    """A command thread that cannot reach the database is news for the others as well: a
    restart ended their connections too."""
    database = pinged_only_on_news
    with _command_thread(database) as first, _command_thread(database) as second:
        lost = first(lambda: _unit_of_work_backend(database))
        with (
            _closed_to_new_connections(database),
            pytest.raises(DBAPIError, match="not currently accepting connections"),
        ):
            second(lambda: _unit_of_work_backend(database))
        assert first(lambda: _unit_of_work_backend(database)) != lost


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
    kept_database: Database, command_thread: InCommandThread
) -> None:
    command_thread(lambda: _unit_of_work_backend(kept_database))
    pool: Any = kept_database.engine.pool
    assert pool.checkedout() == 1
    kept_database.dispose()
    assert pool.checkedout() == 0


def test_a_servers_hands_run_on_its_command_threads_kept_connections(
    client: TestClient[Litestar], operator: Caller, settings: Settings
) -> None:
    database: Database = client.app.state.database
    player, _ = new_player(operator, deposit=10_000)
    table_id = standard_table_id(player)
    for _ in range(5):
        play_until(player, table_id, "settled")
    pool: Any = database.engine.pool
    command_threads, _ = thread_shares(settings.database_pool_size)
    assert 1 <= pool.checkedout() <= command_threads


def test_a_hand_whose_connection_is_lost_is_a_503_and_its_retry_is_served(
    client: TestClient[Litestar], operator: Caller
) -> None:
    database: Database = client.app.state.database
    player, _ = new_player(operator, deposit=10_000)
    table_id = standard_table_id(player)
    play_until(player, table_id, "settled")
    _end_every_other_backend(database)
    hand = {"table_id": table_id, "bet": 100}
    lost = player.post("/v1/hands", hand, key="lost-connection")
    retried = player.post("/v1/hands", hand, key="lost-connection")
    assert (lost.status_code, lost.json()["code"]) == (503, "service_unavailable")
    assert retried.status_code == 201
