"""Alembic environment: online migrations through the ledger's engine factory."""

from __future__ import annotations

import os

from alembic import context
from sqlalchemy import Connection, MetaData

from api.db.models import Base as ServiceBase
from ledger.database import make_engine
from ledger.schema import LedgerBase

# Every metadata whose tables the migrations manage; autogenerate compares against all.
target_metadata: list[MetaData] = [LedgerBase.metadata, ServiceBase.metadata]


def _database_url() -> str:
    config = context.config
    url = config.attributes.get("database_url") or config.get_main_option("sqlalchemy.url")
    if not url:
        url = os.environ.get("CASINO_WAR_DATABASE_URL", "sqlite:///casino-war.db")
    return str(url)


def run_migrations_online() -> None:
    connection = context.config.attributes.get("connection")
    if connection is not None:
        _run(connection)
        return
    engine = make_engine(_database_url())
    try:
        with engine.connect() as connection:
            _run(connection)
    finally:
        engine.dispose()


def _run(connection: Connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        compare_type=True,
        render_as_batch=connection.dialect.name == "sqlite",
    )
    with context.begin_transaction():
        context.run_migrations()


if context.is_offline_mode():
    raise SystemExit("offline (--sql) migrations are not supported: triggers differ per dialect")
run_migrations_online()
