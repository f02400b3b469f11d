"""The ledger: accounts, transactions, entries, chain head, and immutability triggers.

Revision ID: 0001_ledger
Revises:
Create Date: 2024-11-21
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

GENESIS_HASH = "0" * 64  # the chain's prev_hash before the first transaction

revision: str = "0001_ledger"
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

Id = sa.BigInteger().with_variant(sa.Integer(), "sqlite")

# Columns of ledger_accounts that never change after opening (only balance moves).
FROZEN_ACCOUNT_COLUMNS = ("id", "code", "currency", "side", "min_balance", "created_at")

SQLITE_TRIGGERS = [
    *(
        f"""
        CREATE TRIGGER {table}_no_{op_name} BEFORE {op_name.upper()} ON {table}
        BEGIN SELECT RAISE(ABORT, '{table} is append-only: {op_name} refused'); END
        """
        for table in ("ledger_transactions", "ledger_entries")
        for op_name in ("update", "delete")
    ),
    """
    CREATE TRIGGER ledger_accounts_no_delete BEFORE DELETE ON ledger_accounts
    BEGIN SELECT RAISE(ABORT, 'ledger_accounts cannot be deleted'); END
    """,
    f"""
    CREATE TRIGGER ledger_accounts_balance_only BEFORE UPDATE ON ledger_accounts
    WHEN {" OR ".join(f"NEW.{c} IS NOT OLD.{c}" for c in FROZEN_ACCOUNT_COLUMNS)}
    BEGIN SELECT RAISE(ABORT, 'ledger_accounts: only the balance may change'); END
    """,
    """
    CREATE TRIGGER ledger_chain_head_no_delete BEFORE DELETE ON ledger_chain_head
    BEGIN SELECT RAISE(ABORT, 'ledger_chain_head cannot be deleted'); END
    """,
    """
    CREATE TRIGGER ledger_chain_head_forward_only BEFORE UPDATE ON ledger_chain_head
    WHEN NEW.id IS NOT OLD.id OR NEW.seq IS NOT OLD.seq + 1
    BEGIN SELECT RAISE(ABORT, 'ledger_chain_head only moves forward one seq at a time'); END
    """,
]

SQLITE_TRIGGER_NAMES = [
    "ledger_transactions_no_update",
    "ledger_transactions_no_delete",
    "ledger_entries_no_update",
    "ledger_entries_no_delete",
    "ledger_accounts_no_delete",
    "ledger_accounts_balance_only",
    "ledger_chain_head_no_delete",
    "ledger_chain_head_forward_only",
]

POSTGRESQL_TRIGGERS = [
    """
    CREATE FUNCTION ledger_refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        RAISE EXCEPTION '% on % refused: the ledger is append-only', TG_OP, TG_TABLE_NAME
            USING ERRCODE = 'restrict_violation';
    END
    $$
    """,
    *(
        f"""
        CREATE TRIGGER {table}_immutable BEFORE UPDATE OR DELETE ON {table}
        FOR EACH ROW EXECUTE FUNCTION ledger_refuse_change()
        """
        for table in ("ledger_transactions", "ledger_entries")
    ),
    *(
        f"""
        CREATE TRIGGER {table}_no_truncate BEFORE TRUNCATE ON {table}
        FOR EACH STATEMENT EXECUTE FUNCTION ledger_refuse_change()
        """
        for table in (
            "ledger_transactions",
            "ledger_entries",
            "ledger_accounts",
            "ledger_chain_head",
        )
    ),
    """
    CREATE TRIGGER ledger_accounts_no_delete BEFORE DELETE ON ledger_accounts
    FOR EACH ROW EXECUTE FUNCTION ledger_refuse_change()
    """,
    f"""
    CREATE TRIGGER ledger_accounts_balance_only BEFORE UPDATE ON ledger_accounts
    FOR EACH ROW WHEN ({
        " OR ".join(f"NEW.{c} IS DISTINCT FROM OLD.{c}" for c in FROZEN_ACCOUNT_COLUMNS)
    })
    EXECUTE FUNCTION ledger_refuse_change()
    """,
    """
    CREATE TRIGGER ledger_chain_head_no_delete BEFORE DELETE ON ledger_chain_head
    FOR EACH ROW EXECUTE FUNCTION ledger_refuse_change()
    """,
    """
    CREATE TRIGGER ledger_chain_head_forward_only BEFORE UPDATE ON ledger_chain_head
    FOR EACH ROW WHEN (NEW.id IS DISTINCT FROM OLD.id OR NEW.seq IS DISTINCT FROM OLD.seq + 1)
    EXECUTE FUNCTION ledger_refuse_change()
    """,
]


def upgrade() -> None:
    op.create_table(
        "ledger_accounts",
        sa.Column("id", Id, primary_key=True),
        sa.Column("code", sa.String(200), nullable=False),
        sa.Column("currency", sa.String(16), nullable=False),
        sa.Column("side", sa.String(6), nullable=False),
        sa.Column("min_balance", sa.BigInteger(), nullable=True),
        sa.Column("balance", sa.BigInteger(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint("side IN ('debit', 'credit')", name=op.f("ck_ledger_accounts_side")),
        sa.CheckConstraint(
            "min_balance IS NULL OR balance >= min_balance",
            name=op.f("ck_ledger_accounts_balance_limit"),
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_ledger_accounts")),
        sa.UniqueConstraint("code", name=op.f("uq_ledger_accounts_code")),
    )
    op.create_table(
        "ledger_transactions",
        sa.Column("id", Id, primary_key=True),
        sa.Column("seq", sa.BigInteger(), nullable=False),
        sa.Column("kind", sa.String(64), nullable=False),
        sa.Column("reference", sa.String(255), nullable=True),
        sa.Column("idempotency_key", sa.String(255), nullable=False),
        sa.Column("request_hash", sa.String(64), nullable=False),
        sa.Column("metadata", sa.JSON(), nullable=False),
        sa.Column("posted_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("prev_hash", sa.String(64), nullable=False),
        sa.Column("hash", sa.String(64), nullable=False),
        sa.CheckConstraint("seq >= 1", name=op.f("ck_ledger_transactions_seq_positive")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_ledger_transactions")),
        sa.UniqueConstraint("seq", name=op.f("uq_ledger_transactions_seq")),
        sa.UniqueConstraint("idempotency_key", name=op.f("uq_ledger_transactions_idempotency_key")),
        sa.UniqueConstraint("hash", name=op.f("uq_ledger_transactions_hash")),
    )
    op.create_index(op.f("ix_ledger_transactions_reference"), "ledger_transactions", ["reference"])
    op.create_table(
        "ledger_entries",
        sa.Column("id", Id, primary_key=True),
        sa.Column("transaction_id", Id, nullable=False),
        sa.Column("account_id", Id, nullable=False),
        sa.Column("currency", sa.String(16), nullable=False),
        sa.Column("amount", sa.BigInteger(), nullable=False),
        sa.CheckConstraint("amount <> 0", name=op.f("ck_ledger_entries_amount_nonzero")),
        sa.ForeignKeyConstraint(
            ["transaction_id"],
            ["ledger_transactions.id"],
            name=op.f("fk_ledger_entries_transaction_id_ledger_transactions"),
        ),
        sa.ForeignKeyConstraint(
            ["account_id"],
            ["ledger_accounts.id"],
            name=op.f("fk_ledger_entries_account_id_ledger_accounts"),
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_ledger_entries")),
    )
    op.create_index(
        "ix_ledger_entries_account_id_transaction_id",
        "ledger_entries",
        ["account_id", "transaction_id"],
    )
    op.create_index("ix_ledger_entries_transaction_id", "ledger_entries", ["transaction_id"])
    chain_head = op.create_table(
        "ledger_chain_head",
        sa.Column("id", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("seq", sa.BigInteger(), nullable=False),
        sa.Column("hash", sa.String(64), nullable=False),
        sa.CheckConstraint("id = 1", name=op.f("ck_ledger_chain_head_single_row")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_ledger_chain_head")),
    )
    op.bulk_insert(chain_head, [{"id": 1, "seq": 0, "hash": GENESIS_HASH}])

    dialect = op.get_bind().dialect.name
    statements = SQLITE_TRIGGERS if dialect == "sqlite" else POSTGRESQL_TRIGGERS
    for statement in statements:
        op.execute(statement)


def downgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        for name in SQLITE_TRIGGER_NAMES:
            op.execute(f"DROP TRIGGER IF EXISTS {name}")
    else:
        op.execute("DROP FUNCTION ledger_refuse_change() CASCADE")
    op.drop_table("ledger_chain_head")
    op.drop_index("ix_ledger_entries_transaction_id", table_name="ledger_entries")
    op.drop_index("ix_ledger_entries_account_id_transaction_id", table_name="ledger_entries")
    op.drop_table("ledger_entries")
    op.drop_index(op.f("ix_ledger_transactions_reference"), table_name="ledger_transactions")
    op.drop_table("ledger_transactions")
    op.drop_table("ledger_accounts")
