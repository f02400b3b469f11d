"""The driver's own exchanges with PostgreSQL: one round trip each, the transaction's BEGIN
with its first statement, every statement prepared once on its connection."""

from collections.abc import Iterator
from typing import Any

import psycopg
import pytest
from sqlalchemy import Engine, text

from ledger.pq_exchange import Exchanges, numbered

_ON_POSTGRESQL = pytest.mark.parametrize("database_url", ["postgresql"], indirect=True)

_PREPARED = "SELECT count(*) FROM pg_prepared_statements"


def test_placeholders_are_numbered_once_a_name_in_the_order_of_first_use() -> None:
    query, names = numbered("SELECT %(b)s, %(a)s, %(b)s, '100%%'")
    assert (query, names) == (b"SELECT $1, $2, $1, '100%'", ("b", "a"))


@pytest.fixture
def driver_connection(engine: Engine) -> Iterator[Any]:
    """The psycopg connection of one of `engine`'s, out of any transaction."""
    with engine.connect() as connection:
        driver_connection = connection.connection.driver_connection
        assert driver_connection is not None
        driver_connection.rollback()
        yield driver_connection
        if driver_connection.closed:
            connection.invalidate()  # nothing to roll back
        else:
            driver_connection.rollback()


def _prepared_count(driver_connection: Any) -> int:
    count = driver_connection.execute(_PREPARED).fetchone()[0]
    driver_connection.rollback()
    return int(count)


@_ON_POSTGRESQL
def test_a_statement_run_again_is_prepared_once_on_its_connection(driver_connection: Any) -> None:
    exchanges = Exchanges(driver_connection)
    for value in (1, 2, 3):
        assert exchanges.run([("SELECT %(n)s::int", {"n": value})]) == [(value,)]
    driver_connection.rollback()
    assert _prepared_count(driver_connection) == 1


@_ON_POSTGRESQL
def test_an_integer_too_large_for_the_type_a_statement_was_prepared_with_is_prepared_again(
    driver_connection: Any,
) -> None:
    exchanges = Exchanges(driver_connection)
    assert exchanges.run([("SELECT %(n)s", {"n": 1})]) == [(1,)]
    assert exchanges.run([("SELECT %(n)s", {"n": 2**40})]) == [(2**40,)]


@_ON_POSTGRESQL
def test_a_rollback_keeps_the_statements_prepared(driver_connection: Any) -> None:
    """On these connections psycopg prepares nothing of its own (below: when it has, its
    rollback drops every statement prepared on the connection)."""
    exchanges = Exchanges(driver_connection)
    for _ in range(6):  # past psycopg's own threshold for preparing a statement
        driver_connection.execute("SELECT 1")
    exchanges.run([("SELECT %(n)s::int", {"n": 1})])
    driver_connection.rollback()
    assert exchanges.run([("SELECT %(n)s::int", {"n": 2})]) == [(2,)]
    driver_connection.rollback()
    assert _prepared_count(driver_connection) == 1


@_ON_POSTGRESQL
def test_a_statement_after_a_failure_in_its_first_exchange_is_prepared_by_its_next(
    driver_connection: Any,
) -> None:
    exchanges = Exchanges(driver_connection)
    with pytest.raises(psycopg.errors.DivisionByZero):
        exchanges.run([("SELECT 1 / %(zero)s", {"zero": 0}), ("SELECT %(n)s::int", {"n": 1})])
    driver_connection.rollback()
    assert exchanges.run([("SELECT %(n)s::int", {"n": 2})]) == [(2,)]


@_ON_POSTGRESQL
def test_a_transaction_begins_in_the_round_trip_of_its_first_statement(
    driver_connection: Any,
) -> None:
    waits: list[object] = []
    wait = driver_connection.wait

    def counted(generator: Any, *args: Any, **kwargs: Any) -> Any:
        waits.append(generator)
        return wait(generator, *args, **kwargs)

    driver_connection.wait = counted
    try:
        assert Exchanges(driver_connection).run([("SELECT %(n)s::int", {"n": 1})]) == [(1,)]
    finally:
        del driver_connection.wait
    assert len(waits) == 1
    assert driver_connection.info.transaction_status == psycopg.pq.TransactionStatus.INTRANS


@_ON_POSTGRESQL
def test_a_transaction_begins_with_the_connections_settings(driver_connection: Any) -> None:
    isolation_level = driver_connection.isolation_level
    driver_connection.isolation_level = psycopg.IsolationLevel.REPEATABLE_READ
    driver_connection.read_only = True
    exchanges = Exchanges(driver_connection)
    try:
        assert exchanges.run([("SHOW transaction_isolation", {})]) == [("repeatable read",)]
        assert exchanges.run([("SHOW transaction_read_only", {})]) == [("on",)]
    finally:
        driver_connection.rollback()
        driver_connection.read_only = None
        driver_connection.isolation_level = isolation_level


@_ON_POSTGRESQL
def test_a_connection_committing_each_statement_gets_no_begin(driver_connection: Any) -> None:
    driver_connection.autocommit = True
    try:
        Exchanges(driver_connection).run([("SELECT %(n)s::int", {"n": 1})])
        assert driver_connection.info.transaction_status == psycopg.pq.TransactionStatus.IDLE
    finally:
        driver_connection.autocommit = False


@_ON_POSTGRESQL
def test_the_writes_and_the_commit_of_one_exchange_are_all_committed(
    engine: Engine, driver_connection: Any
) -> None:
    insert = "INSERT INTO probe VALUES (%(name)s)"
    exchanges = Exchanges(driver_connection)
    exchanges.run([("CREATE TABLE probe (name TEXT PRIMARY KEY)", {})], commit=True)
    exchanges.run([(insert, {"name": "ada"}), (insert, {"name": "bo"})], commit=True)
    assert driver_connection.info.transaction_status == psycopg.pq.TransactionStatus.IDLE
    with engine.connect() as connection:
        assert connection.execute(text("SELECT count(*) FROM probe")).scalar_one() == 2


@_ON_POSTGRESQL
def test_two_exchanges_on_one_connection_name_their_statements_apart(
    driver_connection: Any,
) -> None:
    first, second = Exchanges(driver_connection), Exchanges(driver_connection)
    assert first.run([("SELECT %(n)s::int", {"n": 1})]) == [(1,)]
    assert second.run([("SELECT %(n)s::int", {"n": 2})]) == [(2,)]


@_ON_POSTGRESQL
def test_statements_dropped_by_another_fail_one_exchange_and_are_prepared_again_by_the_next(
    driver_connection: Any,
) -> None:
    exchanges = Exchanges(driver_connection)
    exchanges.run([("SELECT %(n)s::int", {"n": 1})])
    driver_connection.rollback()
    driver_connection.prepare_threshold = 0  # psycopg prepares its own...
    try:
        driver_connection.execute("SELECT 1")
        driver_connection.rollback()  # ...and so drops them all: DEALLOCATE ALL
    finally:
        driver_connection.prepare_threshold = None
    with pytest.raises(psycopg.errors.InvalidSqlStatementName):
        exchanges.run([("SELECT %(n)s::int", {"n": 2})])
    driver_connection.rollback()
    assert exchanges.run([("SELECT %(n)s::int", {"n": 3})]) == [(3,)]


@_ON_POSTGRESQL
def test_the_least_recently_used_statement_is_closed_past_the_most_a_connection_keeps(
    driver_connection: Any,
) -> None:
    exchanges = Exchanges(driver_connection, most_prepared=2)
    for statement in ("SELECT 1", "SELECT 2", "SELECT 1", "SELECT 3", "SELECT 1"):
        exchanges.run([(statement, {})])
        driver_connection.rollback()
    assert sorted(
        row[0] for row in driver_connection.execute("SELECT statement FROM pg_prepared_statements")
    ) == ["SELECT 1", "SELECT 3"]


@_ON_POSTGRESQL
def test_an_exchange_cut_short_closes_its_connection_rather_than_answer_the_next_with_it(
    driver_connection: Any,
) -> None:
    def cut_short(generator: Any, *_: Any, **__: Any) -> Any:
        next(generator)  # sent, and waiting for its answers
        raise RuntimeError("cut short")

    exchanges = Exchanges(driver_connection)
    driver_connection.wait = cut_short
    try:
        with pytest.raises(RuntimeError, match="cut short"):
            exchanges.run([("SELECT %(who)s", {"who": "the first"})])
    finally:
        del driver_connection.wait
    assert driver_connection.closed
    with pytest.raises(psycopg.OperationalError):
        exchanges.run([("SELECT %(who)s", {"who": "the second"})])
