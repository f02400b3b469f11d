"""The chain head may move forward by several transactions, but only to the newest one.

`ledger.posting.post_all` appends a batch of transactions (a hand's stake and settlement)
and moves the head once, so "one seq at a time" no longer holds. The rule that replaces it
is stronger where it matters to an auditor: the head can only ever name the newest
transaction in the ledger, with that transaction's own hash, and never move back.

Revision ID: 0003_chain_head_to_newest
Revises: 0002_service
Create Date: 2026-11-22
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0003_chain_head_to_newest"
down_revision: str | None = "0002_service"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

MESSAGE = "ledger_chain_head only moves forward, to the newest transaction and its hash"

SQLITE_UPGRADE = [
    "DROP TRIGGER ledger_chain_head_forward_only",
    f"""
    CREATE TRIGGER ledger_chain_head_to_newest BEFORE UPDATE ON ledger_chain_head
    WHEN NEW.id IS NOT OLD.id
        OR NEW.seq <= OLD.seq
        OR NEW.seq IS NOT (SELECT max(seq) FROM ledger_transactions)
        OR NEW.hash IS NOT (SELECT hash FROM ledger_transactions WHERE seq = NEW.seq)
    BEGIN SELECT RAISE(ABORT, '{MESSAGE}'); END
    """,
]
SQLITE_DOWNGRADE = [
    "DROP TRIGGER ledger_chain_head_to_newest",
    """
    CREATE TRIGGER ledger_chain_head_forward_only BEFORE UPDATE ON ledger_chain_head
    WHEN NEW.id IS NOT OLD.id OR NEW.seq IS NOT OLD.seq + 1
    BEGIN SELECT RAISE(ABORT, 'ledger_chain_head only moves forward one seq at a time'); END
    """,
]

# PostgreSQL does not allow subqueries in a trigger's WHEN, so the check is a function.
POSTGRESQL_UPGRADE = [
    "DROP TRIGGER ledger_chain_head_forward_only ON ledger_chain_head",
    f"""
    CREATE FUNCTION ledger_chain_head_to_newest() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        IF NEW.id IS DISTINCT FROM OLD.id
            OR NEW.seq <= OLD.seq
            OR NEW.seq IS DISTINCT FROM (SELECT max(seq) FROM ledger_transactions)
            OR NEW.hash IS DISTINCT FROM
                (SELECT hash FROM ledger_transactions WHERE seq = NEW.seq)
        THEN
            RAISE EXCEPTION '{MESSAGE}' USING ERRCODE = 'restrict_violation';
        END IF;
        RETURN NEW;
    END
    $$
    """,
    """
    CREATE TRIGGER ledger_chain_head_to_newest BEFORE UPDATE ON ledger_chain_head
    FOR EACH ROW EXECUTE FUNCTION ledger_chain_head_to_newest()
    """,
]
POSTGRESQL_DOWNGRADE = [
    "DROP FUNCTION ledger_chain_head_to_newest() CASCADE",
    """
    CREATE TRIGGER ledger_chain_head_forward_only BEFORE UPDATE ON ledger_chain_head
    FOR EACH ROW WHEN (NEW.id IS DISTINCT FROM OLD.id OR NEW.seq IS DISTINCT FROM OLD.seq + 1)
    EXECUTE FUNCTION ledger_refuse_change()
    """,
]


def _run(sqlite: list[str], postgresql: list[str]) -> None:
    for statement in sqlite if op.get_bind().dialect.name == "sqlite" else postgresql:
        op.execute(statement)


def upgrade() -> None:
    _run(SQLITE_UPGRADE, POSTGRESQL_UPGRADE)


def downgrade() -> None:
    _run(SQLITE_DOWNGRADE, POSTGRESQL_DOWNGRADE)
