"""Alembic migrations for every table of the service, configured in code.

`upgrade(url)` is what `casino-war db upgrade` and the test fixtures call; no alembic.ini
is needed. For the `alembic` command line, use `alembic -c migrations/alembic.ini ...`
with `CASINO_WAR_DATABASE_URL` set.
"""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory

from ledger.database import make_engine

SCRIPT_LOCATION = Path(__file__).resolve().parent


def alembic_config(url: str) -> Config:
    """An Alembic configuration for `url`, with the script location set to this package."""
    config = Config()
    config.set_main_option("script_location", str(SCRIPT_LOCATION))
    # ConfigParser interpolates `%`, which URL-encoded passwords contain.
    config.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    config.attributes["database_url"] = url
    return config


def upgrade(url: str, revision: str = "head") -> None:
    """Bring the database at `url` to `revision` (the newest schema by default)."""
    command.upgrade(alembic_config(url), revision)


def is_current(url: str) -> bool:
    """Whether the database at `url` is at the newest schema (False for an empty one)."""
    heads = set(ScriptDirectory.from_config(alembic_config(url)).get_heads())
    engine = make_engine(url)
    try:
        with engine.connect() as connection:
            current = set(MigrationContext.configure(connection).get_current_heads())
    finally:
        engine.dispose()
    return current == heads
