"""Sixteen hash chains instead of one, so that postings stop queueing on the chain head.

Every transaction now names its chain (`ledger_transactions.chain`); `ledger_chain_head`
holds one row per chain (id = chain number). Transactions posted before this migration
are chain 1, which carries on from its head. The other chains start from the genesis hash
at chain 1's last sequence number, so that their numbers (`ledger.chains.next_seq`)
never meet the old ones. The chain head's trigger keeps its rule, per chain: a head only
moves forward, to the newest transaction of its own chain, with that transaction's hash.

Revision ID: 0004_hash_chains
Revises: 0003_chain_head_to_newest
Create Date: 2026-11-22
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0004_hash_chains"
down_revision: str | None = "0003_chain_head_to_newest"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

CHAINS = 16  # ledger.chains.CHAINS when this migration was written
GENESIS_HASH = "0" * 64
MESSAGE = "ledger_chain_head only moves forward, to the newest transaction of its chain"
OLD_MESSAGE = "ledger_chain_head only moves forward, to the newest transaction and its hash"

NEW_CHAINS = f"""
    INSERT INTO ledger_chain_head (id, seq, hash)
    WITH RECURSIVE chain(n) AS (SELECT 2 UNION ALL SELECT n + 1 FROM chain WHERE n < {CHAINS})
    SELECT n, (SELECT seq FROM ledger_chain_head WHERE id = 1), '{GENESIS_HASH}' FROM chain
"""

SQLITE_HEAD_TABLE = """
    CREATE TABLE ledger_chain_head (
        id INTEGER NOT NULL,
        seq BIGINT NOT NULL,
        hash VARCHAR(64) NOT NULL,
        CONSTRAINT pk_ledger_chain_head PRIMARY KEY (id),
        CONSTRAINT {check}
    )
"""
SQLITE_NO_DELETE = """
    CREATE TRIGGER ledger_chain_head_no_delete BEFORE DELETE ON ledger_chain_head
    BEGIN SELECT RAISE(ABORT, 'ledger_chain_head cannot be deleted'); END
"""


def _sqlite_to_newest(per_chain: bool, message: str) -> str:
    chain = " AND chain = NEW.id" if per_chain else ""
    return f"""
    CREATE TRIGGER ledger_chain_head_to_newest BEFORE UPDATE ON ledger_chain_head
    WHEN NEW.id IS NOT OLD.id
        OR NEW.seq <= OLD.seq
        OR NEW.seq IS NOT (SELECT max(seq) FROM ledger_transactions WHERE 1 = 1{chain})
        OR NEW.hash IS NOT (SELECT hash FROM ledger_transactions WHERE seq = NEW.seq{chain})
    BEGIN SELECT RAISE(ABORT, '{message}'); END
    """


def _sqlite_rebuild_head(check: str, to_newest: str) -> list[str]:
    """SQLite cannot alter a CHECK constraint: the (small) head table is rebuilt, and its
    triggers with it."""
    return [
        "DROP TRIGGER ledger_chain_head_no_delete",
        "DROP TRIGGER ledger_chain_head_to_newest",
        "ALTER TABLE ledger_chain_head RENAME TO ledger_chain_head_before",
        SQLITE_HEAD_TABLE.format(check=check),
        "INSERT INTO ledger_chain_head (id, seq, hash) "
        "SELECT id, seq, hash FROM ledger_chain_head_before WHERE id = 1",
        "DROP TABLE ledger_chain_head_before",
        SQLITE_NO_DELETE,
        to_newest,
    ]


CHAIN_NUMBER = f"ck_ledger_chain_head_chain_number CHECK (id BETWEEN 1 AND {CHAINS})"
SINGLE_ROW = "ck_ledger_chain_head_single_row CHECK (id = 1)"


def _postgresql_to_newest(per_chain: bool, message: str) -> str:
    chain = " AND chain = NEW.id" if per_chain else ""
    return f"""
    CREATE OR REPLACE FUNCTION ledger_chain_head_to_newest() RETURNS trigger
    LANGUAGE plpgsql AS $$
    BEGIN
        IF NEW.id IS DISTINCT FROM OLD.id
            OR NEW.seq <= OLD.seq
            OR NEW.seq IS DISTINCT FROM
                (SELECT max(seq) FROM ledger_transactions WHERE true{chain})
            OR NEW.hash IS DISTINCT FROM
                (SELECT hash FROM ledger_transactions WHERE seq = NEW.seq{chain})
        THEN
            RAISE EXCEPTION '{message}' USING ERRCODE = 'restrict_violation';
        END IF;
        RETURN NEW;
    END
    $$
    """


def upgrade() -> None:
    op.add_column(
        "ledger_transactions",
        sa.Column("chain", sa.Integer(), server_default="1", nullable=False),
    )
    op.create_index("ix_ledger_transactions_chain_seq", "ledger_transactions", ["chain", "seq"])
    if op.get_bind().dialect.name == "sqlite":
        statements = _sqlite_rebuild_head(CHAIN_NUMBER, _sqlite_to_newest(True, MESSAGE))
    else:
        statements = [
            "ALTER TABLE ledger_chain_head DROP CONSTRAINT ck_ledger_chain_head_single_row",
            f"ALTER TABLE ledger_chain_head ADD CONSTRAINT {CHAIN_NUMBER}",
            _postgresql_to_newest(True, MESSAGE),
        ]
    for statement in [*statements, NEW_CHAINS]:
        op.execute(statement)


def downgrade() -> None:
    """Back to one chain: possible only while no transaction was posted on another."""
    bind = op.get_bind()
    if bind.execute(sa.text("SELECT count(*) FROM ledger_transactions WHERE chain <> 1")).scalar():
        raise RuntimeError("transactions were posted on chains other than 1: cannot go back")
    if bind.dialect.name == "sqlite":
        statements = _sqlite_rebuild_head(SINGLE_ROW, _sqlite_to_newest(False, OLD_MESSAGE))
    else:
        statements = [
            "ALTER TABLE ledger_chain_head DISABLE TRIGGER ledger_chain_head_no_delete",
            "DELETE FROM ledger_chain_head WHERE id <> 1",
            "ALTER TABLE ledger_chain_head ENABLE TRIGGER ledger_chain_head_no_delete",
            "ALTER TABLE ledger_chain_head DROP CONSTRAINT ck_ledger_chain_head_chain_number",
            f"ALTER TABLE ledger_chain_head ADD CONSTRAINT {SINGLE_ROW}",
            _postgresql_to_newest(False, OLD_MESSAGE),
        ]
    for statement in statements:
        op.execute(statement)
    op.drop_index("ix_ledger_transactions_chain_seq", "ledger_transactions")
    op.drop_column("ledger_transactions", "chain")
