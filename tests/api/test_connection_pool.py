"""A server process keeps a bounded pool of database connections, so that load never opens
and closes connections (on PostgreSQL, a server process each): a unit of work past the pool
waits for a connection, and one that waits past the database timeout is a 503."""

import asyncio
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import anyio
import pytest
from litestar.testing import TestClient
from sqlalchemy import Connection, Engine, text

from api.app import create_app
from api.db.database import Database
from api.db.threads import (
    in_command_thread,
    share_connections_between_threads,
    stop_command_threads,
)
from api.domain.tokens.service import Role
from api.http.health import probe_turns
from api.settings import Settings
from tests.api.conftest import counting_connections, issue_test_token


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
    # Seven: past SQLAlchemy's default of five, which would open and close the other two.
    database = Database.connect(database_url, pool_size=7)
    try:
        with counting_connections(database.engine) as opened:
            for _ in range(3):
                _units_of_work_at_once(database, 7)
        assert len(opened) == 7
    finally:
        database.dispose()


@contextmanager
def _every_pooled_connection_held(engine: Engine) -> Iterator[list[Connection]]:
    """Every connection the pool has left, held until the block ends (those the block has
    not given back itself)."""
    pool: Any = engine.pool
    held = []
    while pool.checkedout() < pool.size():
        held.append(engine.connect())
    try:
        yield held
    finally:
        for connection in held:
            connection.close()


def _small_pool(database_url: str) -> Settings:
    return Settings(database_url=database_url, database_pool_size=2, database_timeout_seconds=0.5)


def test_a_unit_of_work_past_the_pool_waits_for_a_connection_instead_of_opening_one(
    database_url: str,
) -> None:
    database = Database.connect(database_url, pool_size=2)
    try:
        with database.transaction():
            pass  # SQLite's writer takes, and keeps, the connection of its own
        with _every_pooled_connection_held(database.engine) as held:
            with counting_connections(database.engine) as opened:
                waiting = threading.Thread(target=_units_of_work_at_once, args=(database, 1))
                waiting.start()
                waiting.join(timeout=0.5)
                assert waiting.is_alive()  # waiting for a connection: none was opened for it
                held.pop().close()
                waiting.join(timeout=30)
                assert not waiting.is_alive()
            assert opened == []
    finally:
        database.dispose()


def test_a_request_that_waits_for_a_connection_past_the_timeout_is_a_503(
    database_url: str,
) -> None:
    settings = _small_pool(database_url)
    headers = {"Authorization": f"Bearer {issue_test_token(settings, Role.OPERATOR)}"}
    app = create_app(settings)
    with TestClient(app=app) as client:
        assert client.get("/v1/tables", headers=headers).status_code == 200  # token known
        with _every_pooled_connection_held(app.state.database.engine):
            started = time.monotonic()
            waited = client.get("/v1/tables", headers=headers)
            waited_seconds = time.monotonic() - started
        answered = client.get("/v1/tables", headers=headers)
    assert waited.status_code == 503
    assert waited.json()["code"] == "service_unavailable"
    assert waited_seconds < 10  # the database timeout's, not SQLAlchemy's default 30 s
    assert answered.status_code == 200


def test_the_readiness_probe_answers_while_every_pooled_connection_is_at_work(
    database_url: str,
) -> None:
    app = create_app(_small_pool(database_url))
    with TestClient(app=app) as client, _every_pooled_connection_held(app.state.database.engine):
        ready = client.get("/ready")
    assert ready.status_code == 200


def _pooled_places_beside_the_writer(settings: Settings) -> int:
    """The connections a server process's pool holds for its units of work: on SQLite, less
    the one `SqliteWriter` keeps."""
    database: Database = create_app(settings).state.database
    try:
        places: int = database.engine.pool.size()  # type: ignore[attr-defined]
        return places - (database.sqlite_writer is not None)
    finally:
        database.dispose()


def test_the_pool_size_setting_sizes_the_server_process_pool(database_url: str) -> None:
    settings = Settings(database_url=database_url, database_pool_size=3)
    assert _pooled_places_beside_the_writer(settings) == 3


def test_a_server_process_keeps_ten_connections_by_default(
    database_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CASINO_WAR_DATABASE_POOL_SIZE", raising=False)
    assert _pooled_places_beside_the_writer(Settings(database_url=database_url)) == 10


def _most_at_once(pause: Callable[[], None]) -> tuple[Callable[[], None], Callable[[], int]]:
    """A job that pauses a little, and how many of its runs were ever running at once."""
    running = most = 0
    lock = threading.Lock()

    def job() -> None:
        nonlocal running, most
        with lock:
            running += 1
            most = max(most, running)
        pause()
        with lock:
            running -= 1

    return job, lambda: most


def _pause_in_a_read(database: Database) -> None:
    """0.2 s in a read. On PostgreSQL the database server sleeps: a unit of work on the event
    loop gives the loop up while it waits, as it does for every statement."""
    with database.reading() as session:
        if database.is_postgresql:
            session.execute(text("SELECT pg_sleep(0.2)"))
        else:
            time.sleep(0.2)


async def _units_at_once(database: Database) -> tuple[int, int]:
    """The most commands' units of work and executor jobs seen running at once, eight of
    each asked for together."""
    loop = asyncio.get_running_loop()
    command_job, commands_most = _most_at_once(lambda: _pause_in_a_read(database))
    route_job, routes_most = _most_at_once(lambda: time.sleep(0.2))
    await asyncio.gather(
        *(database.run_units(command_job) for _ in range(8)),
        *(loop.run_in_executor(None, route_job) for _ in range(8)),
    )
    return commands_most(), routes_most()


def _most_units_at_once(database_url: str, workers: int) -> tuple[int, int]:
    settings = Settings(database_url=database_url, database_pool_size=5, workers=workers)
    with TestClient(app=create_app(settings)) as client:
        database: Database = client.app.state.database
        return client.blocking_portal.call(_units_at_once, database)


@pytest.mark.parametrize("database_url", ["postgresql"], indirect=True)
def test_postgresql_runs_no_more_units_of_work_at_once_than_its_pool_has_connections(
    database_url: str,
) -> None:
    """Half for the commands (their units of work, token look-ups: on the event loop on
    PostgreSQL, in command threads on SQLite shared by several processes), half for the
    event loop's executor (Litestar's synchronous routes): past them, a request waits on the
    event loop for its turn, and no unit of work ever waits for a connection."""
    assert _most_units_at_once(database_url, workers=1) == (3, 2)


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
def test_sqlite_shared_by_server_processes_runs_half_the_pool_in_command_threads(
    database_url: str,
) -> None:
    assert _most_units_at_once(database_url, workers=2) == (3, 2)


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
def test_sqlite_served_by_one_process_runs_its_units_one_at_a_time_on_the_event_loop(
    database_url: str,
) -> None:
    """Whatever the pool: the executor's half still runs beside them."""
    assert _most_units_at_once(database_url, workers=1) == (1, 2)


async def _probe_turns_of_this_loop() -> tuple[bool, float]:
    turns = probe_turns()
    return turns is probe_turns(), turns.total_tokens


def test_readiness_probes_take_turns_one_at_a_time_per_server_process(
    database_url: str,
) -> None:
    """Each probe opens a connection outside the pool: one at a time, whatever the number of
    `/ready` requests, adds one connection per process at most."""
    with TestClient(app=create_app(Settings(database_url=database_url))) as client:
        same_turns, turns_at_once = client.blocking_portal.call(_probe_turns_of_this_loop)
    assert same_turns
    assert turns_at_once == 1


async def _stopped_after_its_work() -> bool:
    """Whether stopping the command threads returned only once the work in them was done."""
    done = threading.Event()

    def work() -> None:
        time.sleep(0.2)
        done.set()

    share_connections_between_threads(2)
    running = asyncio.ensure_future(in_command_thread(work))
    await asyncio.sleep(0.05)  # the work has reached its thread
    await stop_command_threads()
    finished = done.is_set()
    await running
    return finished


def test_stopping_the_command_threads_waits_for_the_work_they_run() -> None:
    """At shutdown the database closes the connections the threads keep only after."""
    assert anyio.run(_stopped_after_its_work)
