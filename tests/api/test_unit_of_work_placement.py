"""Where a request's units of work run (`Database.run_units`): on the event loop's own
thread, or in a command thread."""

import asyncio
import threading

import pytest

from api.db.database import Database
from api.db.threads import share_connections_between_threads
from ledger.database import POOL_SIZE


def _thread_that_ran_a_unit(database_url: str, server_processes: int) -> threading.Thread:
    """The thread a unit of work ran in, on a loop whose worker threads are set up as the
    server's start-up sets them up (`api.app.create_app`)."""
    database = Database.connect(database_url, server_processes=server_processes)

    async def run_one() -> threading.Thread:
        share_connections_between_threads(POOL_SIZE, command_threads=database.units_run_in_threads)
        return await database.run_units(threading.current_thread)

    try:
        return asyncio.run(run_one())
    finally:
        database.dispose()


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
def test_sqlite_served_by_one_process_runs_units_on_the_event_loop(database_url: str) -> None:
    assert _thread_that_ran_a_unit(database_url, server_processes=1) is threading.current_thread()


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
def test_sqlite_shared_by_several_processes_runs_units_in_a_command_thread(
    database_url: str,
) -> None:
    thread = _thread_that_ran_a_unit(database_url, server_processes=2)
    assert thread.name.startswith("casino-war-command")


def _units_run_in_threads(database_url: str, server_processes: int = 1) -> bool:
    database = Database.connect(database_url, server_processes=server_processes)
    try:
        return database.units_run_in_threads
    finally:
        database.dispose()


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
def test_sqlite_served_by_one_process_needs_no_command_threads(database_url: str) -> None:
    assert not _units_run_in_threads(database_url, server_processes=1)


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
def test_sqlite_shared_by_several_processes_needs_command_threads(database_url: str) -> None:
    assert _units_run_in_threads(database_url, server_processes=2)


@pytest.mark.parametrize("database_url", ["postgresql"], indirect=True)
def test_postgresql_needs_no_command_threads(database_url: str) -> None:
    assert not _units_run_in_threads(database_url)
