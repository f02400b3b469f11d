"""Where a state-changing request's unit of work runs: the event loop or a worker thread."""

import pytest

from api.db.database import Database
from api.http.idempotency import Idempotency


def _runs_on_event_loop(database_url: str, workers: int) -> bool:
    database = Database.connect(database_url)
    try:
        return Idempotency(database, workers=workers).runs_on_event_loop
    finally:
        database.dispose()


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
def test_sqlite_served_by_one_process_runs_on_the_event_loop(database_url: str) -> None:
    assert _runs_on_event_loop(database_url, workers=1)


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
def test_sqlite_shared_by_several_processes_runs_in_a_worker_thread(database_url: str) -> None:
    assert not _runs_on_event_loop(database_url, workers=2)


@pytest.mark.parametrize("database_url", ["postgresql"], indirect=True)
def test_postgresql_runs_in_a_worker_thread(database_url: str) -> None:
    assert not _runs_on_event_loop(database_url, workers=1)
