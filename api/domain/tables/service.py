"""Tables: immutable rule sets that operators open and close."""

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.dialects.postgresql import insert as postgresql_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.orm import Session
from sqlalchemy.sql.dml import Insert

from api.db.models import CasinoTable
from api.db.unique import add_unique
from api.domain.events.service import record_event
from api.domain.tokens.service import Principal
from api.errors import Conflict, NotFound, Refused
from api.pagination import Page, decode_cursor, next_cursor
from casino.odds import PublishedOdds, published_odds
from casino.rules import TableRules

STANDARD_TABLE = "standard"


@dataclass(frozen=True, slots=True)
class Table:
    """A table as players and operators see it: its rules and whether it deals."""

    id: int
    name: str
    open: bool
    created_at: datetime
    rules: TableRules

    @property
    def odds(self) -> PublishedOdds:
        """The house edge of each bet offered and the RTP, published with the table."""
        return published_odds(self.rules)


def _table(row: CasinoTable) -> Table:
    return Table(row.id, row.name, row.is_open, row.created_at, TableRules.from_dict(row.rules))


def create_table(
    session: Session,
    name: str,
    rule_fields: Mapping[str, Any],
    default_currency: str,
    *,
    allow_player_advantage: bool = False,
    actor: Principal | None = None,
) -> Table:
    """A new table; `rule_fields` are the flat rules (`TableRules.as_dict`), defaults filling
    gaps, and the table deals in `default_currency` unless they name another.

    Rules that give the player the edge on a bet the table offers are refused unless the
    operator says so explicitly: a typo in a payout must not become a promotion.
    """
    currency = rule_fields.get("currency") or default_currency
    rules = TableRules.from_dict({**rule_fields, "currency": currency})  # refuses, naming the field
    favoured = published_odds(rules).player_advantage
    if favoured and not allow_player_advantage:
        raise Refused(
            "player_advantage",
            f"these rules give the player the edge on {', '.join(favoured)}; "
            "create the table with allow_player_advantage true if that is meant",
        )
    row = CasinoTable(
        name=name,
        currency=rules.currency,
        rules=rules.as_dict(),
        is_open=True,
        created_at=datetime.now(UTC),
        created_by_token=None if actor is None else actor.token_id,
    )
    add_unique(session, row, field="name", message="is already the name of another table")
    record_event(
        session,
        "table_created",
        actor,
        subject={"table_id": row.id, "name": name},
        details={"rules": rules.as_dict(), "player_advantage": list(favoured)},
    )
    return _table(row)


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


def get_table(session: Session, table_id: int) -> Table:
    table = session.get(CasinoTable, table_id)
    if table is None:
        raise NotFound("table")
    return _table(table)


def set_open(
    session: Session, table_id: int, *, is_open: bool, actor: Principal | None = None
) -> Table:
    """Open or close a table; a change (not a repeat) is a significant event.

    The row is locked `FOR NO KEY UPDATE` (PostgreSQL), as the UPDATE of `is_open` locks
    it anyway: a hand's foreign key to the table takes `FOR KEY SHARE`, which that never
    blocks, so a hand never waits for a table being opened or closed. It could not wait
    safely: a hand holds its player's row and its chain's head by then, and this
    transaction goes on to take the events' head, which the back office's resolution of
    abandoned hands holds while it takes players' rows."""
    locked = select(CasinoTable).where(CasinoTable.id == table_id).with_for_update(key_share=True)
    table = session.scalar(locked)
    if table is None:
        raise NotFound("table")
    if table.is_open != is_open:
        table.is_open = is_open
        session.flush()
        record_event(
            session,
            "table_opened" if is_open else "table_closed",
            actor,
            subject={"table_id": table.id, "name": table.name},
        )
    return _table(table)


def require_open(table_id: int, is_open: bool) -> None:
    if not is_open:
        raise Conflict("table_closed", f"table {table_id} is closed")


def list_tables(session: Session, cursor: str | None, limit: int) -> Page[Table]:
    after = decode_cursor(cursor)
    query = select(CasinoTable).order_by(CasinoTable.id).limit(limit)
    if after is not None:
        query = query.where(CasinoTable.id > after)
    tables = list(session.scalars(query))
    return Page(tuple(map(_table, tables)), next_cursor([t.id for t in tables], limit))
