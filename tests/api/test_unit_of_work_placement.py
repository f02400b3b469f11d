"""Where a request's units of work run (`Database.run_units`): on the event loop's own
thread, or in a command thread."""

import asyncio
import threading

import pytest

from api.db.database import Database


def _thread_that_ran_a_unit(database_url: str, server_processes: int) -> int:
    database = Database.connect(database_url, server_processes=server_processes)
    try:
        return asyncio.run(database.run_units(threading.get_ident))
    finally:
        database.dispose()


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
def test_sqlite_served_by_one_process_runs_units_on_the_event_loop(database_url: str) -> None:
    assert _thread_that_ran_a_unit(database_url, server_processes=1) == threading.get_ident()


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
def test_sqlite_shared_by_several_processes_runs_units_in_a_command_thread(
    database_url: str,
) -> None:
    assert _thread_that_ran_a_unit(database_url, server_processes=2) != threading.get_ident()


@pytest.mark.parametrize("server_processes", [1, 2])
@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
def test_sqlite_needs_command_threads_only_when_shared(
    database_url: str, server_processes: int
) -> None:
    database = Database.connect(database_url, server_processes=server_processes)
    try:
        assert database.units_run_in_threads == (server_processes > 1)
    finally:
        database.dispose()


@pytest.mark.parametrize("database_url", ["postgresql"], indirect=True)
def test_postgresql_needs_no_command_threads(database_url: str) -> None:
    database = Database.connect(database_url)
    try:
        assert not database.units_run_in_threads
    finally:
        database.dispose()
