"""What an attacker with raw SQL access does first: remove the ledger's immutability triggers."""

from sqlalchemy import Engine, text

# The PostgreSQL trigger functions; dropping them with CASCADE drops their triggers.
TRIGGER_FUNCTIONS = ("ledger_refuse_change", "ledger_chain_head_to_newest")


def drop_ledger_triggers(engine: Engine) -> None:
    """Remove the ledger's immutability triggers, so that tests can tamper with its rows."""
    with engine.begin() as connection:
        if engine.dialect.name == "postgresql":
            for function in TRIGGER_FUNCTIONS:
                connection.execute(text(f"DROP FUNCTION IF EXISTS {function}() CASCADE"))
            return
        names = connection.execute(
            text("SELECT name FROM sqlite_master WHERE type = 'trigger' AND name LIKE 'ledger_%'")
        ).scalars()
        for name in list(names):
            connection.execute(text(f"DROP TRIGGER {name}"))
