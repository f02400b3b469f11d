"""The period audit pauses the cyclic garbage collector for each batch, and only then."""

import gc
from collections.abc import Iterator
from typing import Any

import pytest

from api.db.database import Database
from api.db.snapshot import read_snapshot
from api.domain.audit import batch, checks
from api.domain.audit.batch import audit_hands

pytestmark = pytest.mark.usefixtures("played", "collector_enabled")


@pytest.fixture
def collector_enabled() -> Iterator[None]:
    """The collector on for the test, and back as it was after it."""
    was_enabled = gc.isenabled()
    gc.enable()
    yield
    if was_enabled:
        gc.enable()
    else:
        gc.disable()


def _audit(database: Database) -> None:
    with read_snapshot(database.engine) as connection:
        audit_hands(connection)


def test_the_collector_is_off_while_a_batch_of_hands_is_checked(
    database: Database,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seen: list[bool] = []
    check_hand = checks.check_hand

    def noting_the_collector(*args: Any) -> Any:
        seen.append(gc.isenabled())
        return check_hand(*args)

    monkeypatch.setattr(batch, "check_hand", noting_the_collector)

    _audit(database)

    assert seen and not any(seen)


def test_the_collector_is_on_between_batches(database: Database) -> None:
    seen: list[bool] = []
    with read_snapshot(database.engine) as connection:
        audit_hands(connection, on_progress=lambda _: seen.append(gc.isenabled()), batch=5)

    assert len(seen) > 1
    assert all(seen)


def test_the_collector_is_back_on_after_the_audit(database: Database) -> None:
    _audit(database)

    assert gc.isenabled()


def test_the_collector_is_back_on_after_a_batch_that_failed(
    database: Database,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def failing(*_: Any) -> Any:
        raise RuntimeError("the batch failed")

    monkeypatch.setattr(batch, "check_hand", failing)

    with pytest.raises(RuntimeError, match="the batch failed"):
        _audit(database)

    assert gc.isenabled()


def test_a_collector_the_caller_turned_off_stays_off(database: Database) -> None:
    gc.disable()

    _audit(database)

    assert not gc.isenabled()
