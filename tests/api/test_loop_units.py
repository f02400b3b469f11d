"""PostgreSQL: a command's units of work run on the event loop, each turn on one of a few
kept connections, for its units of work and its reads; psycopg's waits are the loop's, so it
serves other requests meanwhile. A kept connection is pinged after it has sat idle or once
another was found lost, and replaced when lost; work off the loop takes a connection from the
pool."""

import asyncio
import dataclasses
import os
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest
import uvloop
from litestar import Litestar
from litestar.testing import TestClient
from sqlalchemy import create_engine, event, text
from sqlalchemy.exc import DBAPIError
from sqlalchemy.orm import Session
from sqlalchemy.pool import NullPool

from api.db.database import Database
from api.db.kept import KeptConnection, Losses
from api.db.loop_units import LoopUnits, NestedUnitOfWork
from api.db.threads import thread_shares
from api.settings import Settings
from ledger.database import normalize_url
from ledger.driver import Sql, driver_of
from tests.api.conftest import (
    Caller,
    NewLoop,
    counting_connections,
    new_player,
    play_until,
    standard_table_id,
)
from tests.conftest import POSTGRES_URL_VARIABLE

pytestmark = pytest.mark.parametrize("database_url", ["postgresql"], indirect=True)

OnTheLoop = Callable[[Callable[[], Any]], Any]

IDLE_LIMIT_SECONDS = 0.05
"""The tests' idle limit before a ping, in place of the service's second."""


class _Loop:
    """An event loop of the test's own, with the database's units started on it as the
    server starts them."""

    def __init__(self, database: Database, connections: int, new_loop: NewLoop) -> None:
        self.database = database
        self.loop = new_loop()
        self.units = database.loop_units
        assert self.units is not None
        self.loop.run_until_complete(self._start(connections))

    async def _start(self, connections: int) -> None:
        assert self.units is not None
        self.units.start(connections)

    def run(self, work: Callable[[], Any]) -> Any:
        """`work()` as a unit of work on the loop; what it returns."""
        return self.loop.run_until_complete(self.database.run_units(work))

    def together(self, *works: Callable[[], Any]) -> list[Any]:
        async def all_of_them() -> list[Any]:
            return list(await asyncio.gather(*(self.database.run_units(w) for w in works)))

        return self.loop.run_until_complete(all_of_them())

    def close(self) -> None:
        self.database.dispose()
        self.loop.close()


@contextmanager
def _on_a_loop(
    database: Database, idle_seconds: float, new_loop: NewLoop, connections: int = 1
) -> Iterator[_Loop]:
    """The service's handle, its kept connections pinged after `idle_seconds` idle (or on
    news of a loss), `connections` of them started on a loop of the test's own."""
    units = LoopUnits(database.engine, idle_seconds)
    loop = _Loop(dataclasses.replace(database, loop_units=units), connections, new_loop)
    try:
        yield loop
    finally:
        loop.close()


@pytest.fixture
def looping(database: Database, new_loop: NewLoop) -> Iterator[_Loop]:
    with _on_a_loop(database, IDLE_LIMIT_SECONDS, new_loop) as loop:
        yield loop


@pytest.fixture
def kept_database(looping: _Loop) -> Database:
    return looping.database


@pytest.fixture
def on_the_loop(looping: _Loop) -> OnTheLoop:
    return looping.run


def _backend_of(session: Session) -> int:
    return int(session.execute(text("SELECT pg_backend_pid()")).scalar_one())


def _unit_of_work_backend(database: Database) -> int:
    with database.transaction() as session:
        return _backend_of(session)


def _holding_its_connection(database: Database) -> Callable[[], int]:
    """A unit of work that holds its connection a moment, so that units asked for together
    each take one of their own."""

    def held() -> int:
        with database.transaction() as session:
            session.execute(text("SELECT pg_sleep(0.1)"))
            return _backend_of(session)

    return held


def _unit_of_work_connection(database: Database) -> Any:
    """psycopg's connection a unit of work ran on, once it has waited for an answer."""
    with database.transaction() as session:
        session.execute(text("SELECT 1"))
        return session.connection().connection.driver_connection


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


def _assert_the_next_unit_of_work_commits(database: Database, on_the_loop: OnTheLoop) -> None:
    on_the_loop(lambda: _add_player(database))
    assert _count_players(database) == 1


def _write_while_reading(database: Database) -> None:
    with database.reading() as session:
        session.execute(
            text("INSERT INTO players (display_name, created_at) VALUES ('Bo', '2026-11-26')")
        )


def test_a_turns_units_of_work_and_reads_share_its_one_connection(
    kept_database: Database, on_the_loop: OnTheLoop
) -> None:
    backends = {
        on_the_loop(lambda: _unit_of_work_backend(kept_database)),
        on_the_loop(lambda: _unit_of_work_backend(kept_database)),
        on_the_loop(lambda: _read_backend(kept_database)),
    }
    assert len(backends) == 1


def test_a_unit_of_work_off_the_loop_takes_a_connection_from_the_pool(
    kept_database: Database, on_the_loop: OnTheLoop
) -> None:
    kept = on_the_loop(lambda: _unit_of_work_backend(kept_database))
    assert _unit_of_work_backend(kept_database) != kept


def test_a_unit_of_work_begun_inside_another_on_the_loop_is_refused(
    kept_database: Database, on_the_loop: OnTheLoop
) -> None:
    """A second would wait on the loop for a connection from the pool; none is needed."""

    def nested() -> None:
        with kept_database.transaction():
            _unit_of_work_backend(kept_database)

    with pytest.raises(NestedUnitOfWork):
        on_the_loop(nested)
    _assert_the_next_unit_of_work_commits(kept_database, on_the_loop)


def test_a_turn_lends_its_connection_to_its_own_database_alone(
    kept_database: Database, on_the_loop: OnTheLoop
) -> None:
    other = Database.connect(kept_database.engine.url.render_as_string(hide_password=False))

    def own_and_other() -> tuple[int, int]:
        with kept_database.transaction() as session:
            own = _backend_of(session)
        with other.transaction() as session:
            return own, _backend_of(session)

    try:
        own, others = on_the_loop(own_and_other)
    finally:
        other.dispose()
    assert own != others


def test_units_of_work_at_once_each_have_a_kept_connection_of_their_own(
    database: Database, new_loop: NewLoop
) -> None:
    with _on_a_loop(database, IDLE_LIMIT_SECONDS, new_loop, connections=2) as loop:
        held = _holding_its_connection(database)
        first = set(loop.together(held, held))
        again = set(loop.together(held, held))
    assert len(first) == 2
    assert again == first


def test_the_loop_serves_other_work_while_a_unit_of_work_waits_for_the_database(
    looping: _Loop,
) -> None:
    def slow_read() -> None:
        with looping.database.reading() as session:
            session.execute(text("SELECT pg_sleep(0.3)"))

    async def other_work_while_it_waits() -> bool:
        unit = asyncio.ensure_future(looping.database.run_units(slow_read))
        await asyncio.sleep(0.05)
        served_meanwhile = not unit.done()
        await unit
        return served_meanwhile

    assert looping.loop.run_until_complete(other_work_while_it_waits())


def _activity(database: Database, backend: int) -> str | None:
    """What `backend` waits for ('' if nothing), or None once it has ended."""
    with database.prober.connect() as connection:
        row = connection.execute(
            text("SELECT coalesce(wait_event, '') FROM pg_stat_activity WHERE pid = :pid"),
            {"pid": backend},
        ).first()
    return None if row is None else str(row[0])


def _until(condition: Callable[[], bool], seconds: float = 20) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "waited too long"
        time.sleep(0.01)


Sleep = Callable[[Session], None]
UnitOfWork = Callable[[Database, Sleep, list[int]], None]


def _write_then(database: Database, sleep: Sleep, backends: list[int]) -> None:
    with database.transaction() as session:
        backends.append(_backend_of(session))
        session.execute(
            text("INSERT INTO players (display_name, created_at) VALUES ('Cy', '2026-11-27')")
        )
        sleep(session)


def _read_then(database: Database, sleep: Sleep, backends: list[int]) -> None:
    with database.reading() as session:
        backends.append(_backend_of(session))
        sleep(session)


def _cancelled_while_sleeping(looping: _Loop, unit_of_work: UnitOfWork, sleep: Sleep) -> int:
    """A unit of work that `sleep`s in the database (for longer than the test waits) and is
    cancelled once the server sleeps; the backend it ran on, once that backend has ended."""
    database = looping.database
    backends: list[int] = []

    def sleeping() -> bool:
        return bool(backends) and _activity(database, backends[0]) == "PgSleep"

    async def cancelled() -> None:
        unit = asyncio.ensure_future(
            database.run_units(lambda: unit_of_work(database, sleep, backends))
        )
        await asyncio.to_thread(_until, sleeping)
        unit.cancel()
        with pytest.raises(asyncio.CancelledError):
            await unit

    looping.loop.run_until_complete(cancelled())
    _until(lambda: _activity(database, backends[0]) is None)
    return backends[0]


def _sleep_through_sqlalchemy(session: Session) -> None:
    session.execute(text("SELECT pg_sleep(60)"))


def _sleep_on_the_driver(session: Session) -> None:
    driver_of(session).first(Sql.of("SELECT pg_sleep(60)"), {})


def _sleep_in_the_commits_pipeline(session: Session) -> None:
    driver_of(session).execute(Sql.of("SELECT pg_sleep(60)"), {})  # sent with the COMMIT


@pytest.mark.parametrize(
    ("unit_of_work", "sleep"),
    [
        (_write_then, _sleep_through_sqlalchemy),
        (_write_then, _sleep_on_the_driver),
        (_write_then, _sleep_in_the_commits_pipeline),
        (_read_then, _sleep_through_sqlalchemy),
        (_read_then, _sleep_on_the_driver),
    ],
    ids=[
        "write-sqlalchemy",
        "write-driver",
        "write-commit-pipeline",
        "read-sqlalchemy",
        "read-driver",
    ],
)
def test_a_unit_of_work_cancelled_while_waiting_is_rolled_back_and_its_connection_replaced(
    looping: _Loop, unit_of_work: UnitOfWork, sleep: Sleep
) -> None:
    """Its exchange with the server was cut halfway, whether the statement went through
    SQLAlchemy or past it on the driver, or sits in the COMMIT's pipeline: the server is
    asked to cancel it, so nothing commits, and the connection is closed. The next unit of
    work commits on a new one, and the pool's other connections stay."""
    database = looping.database
    engine = database.engine
    with engine.connect(), engine.connect(), engine.connect():
        pass  # three connections in the pool, opened before the cut
    with counting_connections(engine) as opened:
        cut = _cancelled_while_sleeping(looping, unit_of_work, sleep)
        assert _count_players(database) == 0
        assert looping.run(lambda: _unit_of_work_backend(database)) != cut
        _assert_the_next_unit_of_work_commits(database, looping.run)
    assert len(opened) == 1  # the cut connection's replacement alone: the pool stayed


def _connecting_threads() -> set[threading.Thread]:
    return {t for t in threading.enumerate() if t.name.startswith("casino-war-connect")}


def test_a_connection_is_opened_in_a_thread_off_the_loop(
    kept_database: Database, on_the_loop: OnTheLoop
) -> None:
    """psycopg's `connect` blocks, up to the connection timeout while a database restarts.
    (The threads that open connections start only when asked to open one.)"""
    kept_database.engine.dispose()  # the pool holds no connection to hand out
    before = _connecting_threads()
    on_the_loop(lambda: _unit_of_work_backend(kept_database))
    assert len(_connecting_threads() - before) == 1


def test_units_of_work_are_refused_on_a_loop_that_has_not_started_them(
    database: Database,
) -> None:
    units = LoopUnits(database.engine)
    with pytest.raises(RuntimeError, match="not been started"):
        asyncio.run(units.run(lambda: None))


def test_a_wait_with_a_timeout_is_refused_on_the_loop(
    kept_database: Database, on_the_loop: OnTheLoop
) -> None:
    """It would block the loop: psycopg's `notifies` alone asks for one."""

    def listen_a_moment() -> None:
        with kept_database.transaction() as session:
            driver_connection: Any = session.connection().connection.driver_connection
            list(driver_connection.notifies(timeout=0.01))

    with pytest.raises(RuntimeError, match="timeout is not awaited"):
        on_the_loop(listen_a_moment)


def test_a_read_on_the_kept_connection_refuses_writes(
    kept_database: Database, on_the_loop: OnTheLoop
) -> None:
    with pytest.raises(DBAPIError, match="read-only transaction"):
        on_the_loop(lambda: _write_while_reading(kept_database))


def test_a_unit_of_work_after_a_read_on_the_kept_connection_writes(
    kept_database: Database, on_the_loop: OnTheLoop
) -> None:
    on_the_loop(lambda: _read_backend(kept_database))
    _assert_the_next_unit_of_work_commits(kept_database, on_the_loop)


def test_a_unit_of_work_after_a_refused_write_in_a_read_commits(
    kept_database: Database, on_the_loop: OnTheLoop
) -> None:
    with pytest.raises(DBAPIError):
        on_the_loop(lambda: _write_while_reading(kept_database))
    _assert_the_next_unit_of_work_commits(kept_database, on_the_loop)


def _reads_alone_in_one_transaction(database: Database) -> bool:
    """Whether two reads alone found themselves in one transaction."""
    with database.reading_alone() as driver:
        began = [driver.scalar(Sql.of("SELECT now()"), {}) for _ in range(2)]
    return bool(began[0] == began[1])


def test_a_read_alone_on_the_loop_runs_in_no_transaction(
    kept_database: Database, on_the_loop: OnTheLoop
) -> None:
    """`now()` is when the statement's transaction began: the same for two reads in one."""
    assert on_the_loop(lambda: _reads_alone_in_one_transaction(kept_database)) is False


def _fail_a_write(database: Database) -> None:
    with database.transaction() as session:
        session.execute(
            text("INSERT INTO players (display_name, created_at) VALUES ('Cy', '2026-11-27')")
        )
        session.execute(text("SELECT 1 / 0"))


def _assert_the_next_unit_of_work_is_one_transaction(
    database: Database, on_the_loop: OnTheLoop
) -> None:
    """A unit of work that fails after a write keeps nothing: in autocommit it would."""
    with pytest.raises(DBAPIError, match="division by zero"):
        on_the_loop(lambda: _fail_a_write(database))
    assert _count_players(database) == 0


def test_a_unit_of_work_after_a_read_alone_is_one_transaction_again(
    kept_database: Database, on_the_loop: OnTheLoop
) -> None:
    on_the_loop(lambda: _reads_alone_in_one_transaction(kept_database))
    _assert_the_next_unit_of_work_is_one_transaction(kept_database, on_the_loop)


def test_a_unit_of_work_after_a_failed_read_alone_is_one_transaction_again(
    kept_database: Database, on_the_loop: OnTheLoop
) -> None:
    def failing_read() -> None:
        with kept_database.reading_alone() as driver:
            driver.first(Sql.of("SELECT 1 / 0"), {})

    with pytest.raises(DBAPIError, match="division by zero"):
        on_the_loop(failing_read)
    _assert_the_next_unit_of_work_is_one_transaction(kept_database, on_the_loop)


def test_a_read_refused_on_the_way_ends_by_commit(
    kept_database: Database, on_the_loop: OnTheLoop
) -> None:
    ended: list[str] = []

    def refused_read() -> None:
        with kept_database.reading() as session:
            session.execute(text("SELECT 1"))
            raise LookupError("not found")

    event.listen(kept_database.engine, "commit", lambda _: ended.append("commit"))
    event.listen(kept_database.engine, "rollback", lambda _: ended.append("rollback"))
    with pytest.raises(LookupError):
        on_the_loop(refused_read)
    assert ended == ["commit"]


def test_a_read_whose_commit_fails_leaves_the_kept_connection_ready_for_a_unit_of_work(
    kept_database: Database, on_the_loop: OnTheLoop
) -> None:
    def read_failing_at_commit() -> None:
        with kept_database.reading() as session:
            driver_of(session).execute(Sql.of("SELECT 1 / 0"), {})  # sent with the COMMIT

    with pytest.raises(DBAPIError, match="division by zero"):
        on_the_loop(read_failing_at_commit)
    _assert_the_next_unit_of_work_commits(kept_database, on_the_loop)


def test_a_read_that_cannot_be_cleaned_up_has_its_connection_replaced(
    kept_database: Database, on_the_loop: OnTheLoop
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

    replaced = on_the_loop(read_and_fail)
    assert failed_rollbacks
    assert on_the_loop(lambda: _unit_of_work_backend(kept_database)) != replaced


def test_a_kept_connection_lost_while_idle_is_pinged_and_replaced_unseen(
    kept_database: Database, on_the_loop: OnTheLoop
) -> None:
    lost = on_the_loop(lambda: _unit_of_work_backend(kept_database))
    _end_backend(kept_database, lost)
    time.sleep(IDLE_LIMIT_SECONDS * 2)
    assert on_the_loop(lambda: _unit_of_work_backend(kept_database)) != lost


def _asyncio_only(loop: asyncio.AbstractEventLoop) -> None:
    """A test that asks whether a reader was on asks asyncio's loop: uvloop's
    `remove_reader` returns None whatever it finds (its readers are held to their behaviour
    by the tests around, and by tests/api/test_loop_waits.py)."""
    if isinstance(loop, uvloop.Loop):
        pytest.skip("uvloop's remove_reader does not say whether a reader was on")


def test_a_kept_connection_keeps_the_loops_reader_on_its_socket_between_units_of_work(
    kept_database: Database, looping: _Loop
) -> None:
    _asyncio_only(looping.loop)
    socket = looping.run(lambda: _unit_of_work_connection(kept_database)).pgconn.socket
    looping.run(lambda: _unit_of_work_backend(kept_database))
    assert looping.loop.remove_reader(socket)


def test_a_kept_connection_handed_back_to_the_pool_leaves_no_reader_on_its_socket(
    kept_database: Database, looping: _Loop
) -> None:
    """The pool's other users wait as psycopg does, and it may close the socket."""
    _asyncio_only(looping.loop)
    connection = looping.run(lambda: _unit_of_work_connection(kept_database))
    assert looping.units is not None
    looping.units.close()
    assert not connection.closed  # in the pool, its reader taken off at the check-in
    assert not looping.loop.remove_reader(connection.pgconn.socket)


def test_a_kept_connection_the_server_closes_while_idle_leaves_the_loop_idle(
    kept_database: Database, looping: _Loop
) -> None:
    """A socket closed by the server turns readable with nobody waiting, and a reader left
    on it would wake the loop on every turn, spending the CPU of a busy loop while it
    sleeps."""
    lost = looping.run(lambda: _unit_of_work_backend(kept_database))
    _end_backend(kept_database, lost)
    began = time.thread_time()
    looping.loop.run_until_complete(asyncio.sleep(0.3))
    assert time.thread_time() - began < 0.1
    assert looping.run(lambda: _unit_of_work_backend(kept_database)) != lost


def test_a_kept_connection_lost_at_work_fails_that_unit_of_work_and_is_replaced(
    kept_database: Database, on_the_loop: OnTheLoop
) -> None:
    with pytest.raises(DBAPIError):
        on_the_loop(lambda: _lose_the_connection_at_work(kept_database))
    _assert_the_next_unit_of_work_commits(kept_database, on_the_loop)


def test_one_kept_connection_found_lost_has_the_others_pinged_before_they_next_work(
    database: Database, new_loop: NewLoop
) -> None:
    """The idle limit an hour: only news of a loss has a kept connection pinged."""
    with _on_a_loop(database, 3600, new_loop, connections=2) as loop:
        held = _holding_its_connection(database)
        before = set(loop.together(held, held))
        _end_every_other_backend(database)
        with pytest.raises(DBAPIError):
            loop.run(held)  # the first to work finds its connection lost
        after = set(loop.together(held, held))
    assert len(after) == 2
    assert not after & before


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
    database: Database,
) -> None:
    """A kept connection that cannot reach the database is news for the others as well: a
    restart ended their connections too. (The idle limit an hour, as above.)"""
    losses = Losses()
    first, second = (KeptConnection(database.engine, 3600, losses) for _ in range(2))
    with first.transaction() as session:
        lost = _backend_of(session)
    with (
        _closed_to_new_connections(database),
        pytest.raises(DBAPIError, match="not currently accepting connections"),
        second.transaction(),
    ):
        pass
    with first.transaction() as session:
        assert _backend_of(session) != lost
    first.close()
    second.close()


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
    kept_database: Database, on_the_loop: OnTheLoop
) -> None:
    on_the_loop(lambda: _unit_of_work_backend(kept_database))
    pool: Any = kept_database.engine.pool
    assert pool.checkedout() == 1
    kept_database.dispose()
    assert pool.checkedout() == 0


def test_a_servers_hands_run_on_its_loops_kept_connections(
    client: TestClient[Litestar], operator: Caller, settings: Settings
) -> None:
    database: Database = client.app.state.database
    player, _ = new_player(operator, deposit=10_000)
    table_id = standard_table_id(player)
    for _ in range(5):
        play_until(player, table_id, "settled")
    pool: Any = database.engine.pool
    kept, _ = thread_shares(settings.database_pool_size)
    assert 1 <= pool.checkedout() <= kept


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
