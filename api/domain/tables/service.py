"""Tables: immutable rule sets that operators open and close."""

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.dialects.postgresql import insert as postgresql_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.orm import Session
from sqlalchemy.sql.dml import Insert

from api.db.models import CasinoTable
from api.db.unique import add_unique
from api.domain.tables.schemas import Rules, TableCreate, TablePage, TableView
from api.errors import Conflict, NotFound
from api.pagination import decode_cursor, next_cursor
from casino.rules import TableRules

STANDARD_TABLE = "standard"


def table_rules(table: CasinoTable) -> TableRules:
    return TableRules.from_dict(table.rules)


def to_view(table: CasinoTable) -> TableView:
    return TableView(
        id=table.id, name=table.name, open=table.is_open, created_at=table.created_at, **table.rules
    )


def rules_view(flat_rules: dict[str, Any]) -> Rules:
    return Rules(**flat_rules)


def create_table(session: Session, request: TableCreate, default_currency: str) -> TableView:
    fields = request.model_dump(exclude={"name"})
    fields["currency"] = request.currency or default_currency
    rules = TableRules.from_dict(fields)  # refuses an invalid rule set, naming the field
    table = CasinoTable(
        name=request.name,
        currency=rules.currency,
        rules=rules.as_dict(),
        is_open=True,
        created_at=datetime.now(UTC),
    )
    add_unique(session, table, field="name", message="is already the name of another table")
    return to_view(table)


def ensure_standard_table(session: Session, currency: str) -> None:
    """A fresh database has one open table, `standard`, with the default rules.

    Safe when several workers start at once: the name is unique and a second insert is skipped.
    """
    if session.scalar(select(CasinoTable.id).limit(1)) is not None:
        return
    values = {
        "name": STANDARD_TABLE,
        "currency": currency,
        "rules": TableRules(currency=currency).as_dict(),
        "is_open": True,
        "created_at": datetime.now(UTC),
    }
    session.execute(_insert_ignoring_conflict(session.get_bind().dialect.name, values))


def _insert_ignoring_conflict(dialect: str, values: dict[str, Any]) -> Insert:
    insert = postgresql_insert if dialect == "postgresql" else sqlite_insert
    return insert(CasinoTable).values(values).on_conflict_do_nothing()


def get_table(session: Session, table_id: int) -> CasinoTable:
    table = session.get(CasinoTable, table_id)
    if table is None:
        raise NotFound("table")
    return table


def set_open(session: Session, table_id: int, *, is_open: bool) -> TableView:
    table = session.scalar(select(CasinoTable).where(CasinoTable.id == table_id).with_for_update())
    if table is None:
        raise NotFound("table")
    table.is_open = is_open
    session.flush()
    return to_view(table)


def require_open(table: CasinoTable) -> None:
    if not table.is_open:
        raise Conflict("table_closed", f"table {table.id} is closed")


def list_tables(session: Session, cursor: str | None, limit: int) -> TablePage:
    after = decode_cursor(cursor)
    query = select(CasinoTable).order_by(CasinoTable.id).limit(limit)
    if after is not None:
        query = query.where(CasinoTable.id > after)
    tables = list(session.scalars(query))
    return TablePage(
        items=[to_view(t) for t in tables], next_cursor=next_cursor([t.id for t in tables], limit)
    )
