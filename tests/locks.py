"""PostgreSQL: waiting, in a test, until another transaction is stuck on a lock."""

import time

from sqlalchemy import Engine, text

_WAITING = text(
    "SELECT count(*) FROM pg_stat_activity "
    "WHERE datname = current_database() AND wait_event_type = 'Lock'"
)


def until_a_backend_waits_for_a_lock(engine: Engine, waiter: str) -> None:
    """Return once a connection to `engine`'s database waits for a lock; fail, naming
    `waiter`, if none does within five seconds."""
    for _ in range(500):
        with engine.connect() as connection:
            if connection.execute(_WAITING).scalar_one():
                return
        time.sleep(0.01)
    raise AssertionError(f"{waiter} never waited for a lock")
