"""Reads of hands by their status cost the same whatever the number of hands.

The hands awaiting a decision are found by their status in an index, though no index of
every hand's (status, created_at) is kept for them any more (migration
`0012_drop_status_created_index`): the index of (status, settled_at, id) that the payout
reports read finds them, or the partial index that holds them. The settled hands, nearly all
of them, are listed newest first by id, and the read stops at the page's end."""

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from sqlalchemy import Connection, Engine, event
from sqlalchemy.orm import Session

from api.domain.audit.integrity import check_held
from api.domain.hands import service as hands
from api.domain.hands.unfinished import unfinished_hands
from casino.hand import HandStatus

BY_STATUS = ("ix_hands_status_settled_at_id", "uq_hands_one_unfinished_per_player")
"""The indexes that find the hands awaiting a decision without reading the others."""

Statement = tuple[str, Any]


@contextmanager
def _recorded(engine: Engine) -> Iterator[list[Statement]]:
    """The statements `engine` sends while the block runs, with their parameters."""
    sent: list[Statement] = []

    def record(*args: Any) -> None:
        _connection, _cursor, statement, parameters = args[:4]
        sent.append((statement, parameters))

    event.listen(engine, "before_cursor_execute", record)
    try:
        yield sent
    finally:
        event.remove(engine, "before_cursor_execute", record)


def _plan(connection: Connection, statement: Statement) -> str:
    """The database's plan for `statement`. PostgreSQL is told to avoid reading whole
    tables, since a test's tables are small enough to be read whole anyway: what is asked is
    whether an index serves the read at all."""
    sql, parameters = statement
    if connection.dialect.name == "sqlite":
        rows = connection.exec_driver_sql(f"EXPLAIN QUERY PLAN {sql}", parameters).all()
    else:
        connection.exec_driver_sql("SET LOCAL enable_seqscan = off")
        rows = connection.exec_driver_sql(f"EXPLAIN {sql}", parameters).all()
    return "\n".join(str(row[-1]) for row in rows)


def _plan_of_the_read(
    engine: Engine, read: Callable[[Session], object], picking: str = "hands.status ="
) -> str:
    """The plan of the one statement of `read` that picks hands by `picking`."""
    with _recorded(engine) as sent, Session(engine) as session:
        read(session)
    (by_status,) = [statement for statement in sent if picking in statement[0]]
    with engine.connect() as connection:
        return _plan(connection, by_status)


def _listing(status: HandStatus, table_id: int | None = None) -> Callable[[Session], object]:
    """The back office's first page of hands in `status` (at one table)."""

    def listed(session: Session) -> object:
        return hands.list_hands(
            session,
            player_id=None,
            table_id=table_id,
            status=status.value,
            cursor=None,
            limit=50,
            reveal=False,
        )

    return listed


def _found_by_status(plan: str) -> bool:
    return any(index in plan for index in BY_STATUS) and "SCAN hands" not in plan


def test_the_ties_awaiting_the_house_are_found_by_their_status_in_an_index(engine: Engine) -> None:
    plan = _plan_of_the_read(engine, lambda session: unfinished_hands(session, 60))
    assert _found_by_status(plan), plan


def test_the_audits_unsettled_stakes_are_found_by_their_status_in_an_index(engine: Engine) -> None:
    plan = _plan_of_the_read(engine, lambda session: check_held(session.connection()))
    assert _found_by_status(plan), plan


def _sorts(plan: str) -> bool:
    return "TEMP B-TREE" in plan or "Sort" in plan


def _in_order_on_sqlite(engine: Engine, plan: str) -> bool:
    """SQLite reads the hands awaiting a decision in the page's order. PostgreSQL may read
    the partial index that holds those hands alone and sort them: they are a few, one a
    player at most, whatever the history."""
    return engine.dialect.name != "sqlite" or not _sorts(plan)


def test_the_back_offices_list_of_hands_awaiting_a_decision_finds_them_by_status_in_order(
    engine: Engine,
) -> None:
    plan = _plan_of_the_read(engine, _listing(HandStatus.AWAITING_DECISION))
    assert _found_by_status(plan) and _in_order_on_sqlite(engine, plan), plan


def test_a_tables_hands_awaiting_a_decision_are_found_by_status_not_through_its_history(
    engine: Engine,
) -> None:
    plan = _plan_of_the_read(engine, _listing(HandStatus.AWAITING_DECISION, table_id=1))
    assert _found_by_status(plan) and "ix_hands_table_id" not in plan, plan
    assert _in_order_on_sqlite(engine, plan), plan


def test_the_back_offices_list_of_settled_hands_reads_newest_first_and_sorts_nothing(
    engine: Engine,
) -> None:
    plan = _plan_of_the_read(engine, _listing(HandStatus.SETTLED), picking="settled_at IS NOT")
    assert not _sorts(plan), plan
