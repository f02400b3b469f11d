"""A server process keeps the database connections its concurrent requests need, so that
load never opens and closes connections (on PostgreSQL, a server process each)."""

import threading
from collections.abc import Iterator
from contextlib import contextmanager

from anyio.to_thread import current_default_thread_limiter
from litestar.testing import TestClient
from sqlalchemy import Engine, event, text

from api.app import create_app
from api.db.database import Database
from api.settings import Settings


@contextmanager
def _counting_connections(engine: Engine) -> Iterator[list[object]]:
    opened: list[object] = []

    def _opened(dbapi_connection: object, _record: object) -> None:
        opened.append(dbapi_connection)

    event.listen(engine, "connect", _opened)
    try:
        yield opened
    finally:
        event.remove(engine, "connect", _opened)


def _units_of_work_at_once(database: Database, count: int) -> None:
    """`count` units of work, each holding its connection until all of them hold one."""
    all_in = threading.Barrier(count, timeout=30)
    failures: list[BaseException] = []

    def _unit_of_work() -> None:
        try:
            with database.reading() as session:
                session.execute(text("SELECT 1"))
                all_in.wait()
        except BaseException as failure:  # reported by the test, not lost with the thread
            failures.append(failure)

    threads = [threading.Thread(target=_unit_of_work) for _ in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not failures


def test_as_many_units_of_work_at_once_as_the_pool_keeps_reuse_its_connections(
    database_url: str,
) -> None:
    database = Database.connect(database_url, pool_size=4)
    try:
        with _counting_connections(database.engine) as opened:
            for _ in range(3):
                _units_of_work_at_once(database, 4)
        assert len(opened) == 4
    finally:
        database.dispose()


def test_the_pool_size_setting_sizes_the_server_process_pool(database_url: str) -> None:
    app = create_app(Settings(database_url=database_url, database_pool_size=3))
    database: Database = app.state.database
    try:
        assert database.engine.pool.size() == 3  # type: ignore[attr-defined]
    finally:
        database.dispose()


def test_a_server_process_keeps_ten_connections_by_default(database_url: str) -> None:
    app = create_app(Settings(database_url=database_url))
    database: Database = app.state.database
    try:
        assert database.engine.pool.size() == 10  # type: ignore[attr-defined]
    finally:
        database.dispose()


async def _worker_threads_allowed() -> float:
    return current_default_thread_limiter().total_tokens


def test_a_server_process_runs_no_more_blocking_calls_at_once_than_its_pool_keeps(
    database_url: str,
) -> None:
    """Each blocking call (a unit of work in a worker thread) holds one connection at most,
    so with no more of them at once than the pool keeps, no load opens a connection past
    it: the rest wait their turn for a thread instead."""
    app = create_app(Settings(database_url=database_url, database_pool_size=3))
    with TestClient(app=app) as client:
        assert client.blocking_portal.call(_worker_threads_allowed) == 3
