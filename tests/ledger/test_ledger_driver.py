"""Statements for the driver (`ledger.driver`): one text, each dialect's spelling."""

from ledger.driver import Sql


def test_named_parameters_become_pyformat_for_postgresql_and_stay_named_for_sqlite() -> None:
    statement = Sql.of("SELECT a FROM t WHERE id = :id AND code = :code")
    assert statement.sqlite == "SELECT a FROM t WHERE id = :id AND code = :code"
    assert statement.postgresql == "SELECT a FROM t WHERE id = %(id)s AND code = %(code)s"


def test_rows_are_locked_on_postgresql_only() -> None:
    statement = Sql.of("SELECT a FROM t WHERE id = :id{for_update}")
    assert statement.sqlite == "SELECT a FROM t WHERE id = :id"
    assert statement.postgresql == "SELECT a FROM t WHERE id = %(id)s FOR UPDATE"


def test_casts_and_times_are_not_taken_for_parameters() -> None:
    statement = Sql.of("SELECT x::text, '12:30' FROM t WHERE id = :id")
    assert statement.postgresql == "SELECT x::text, '12:30' FROM t WHERE id = %(id)s"
