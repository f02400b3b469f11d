"""The service's own records: players, tokens, tables, seed pairs, hands, idempotency.

Revision ID: 0002_service
Revises: 0001_ledger
Create Date: 2026-11-21
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0002_service"
down_revision: str | None = "0001_ledger"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "casino_tables",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("name", sa.String(length=100), nullable=False),
        sa.Column("currency", sa.String(length=3), nullable=False),
        sa.Column("rules", sa.JSON(), nullable=False),
        sa.Column("is_open", sa.Boolean(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("name"),
    )
    op.create_table(
        "idempotency_records",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("caller", sa.String(length=64), nullable=False),
        sa.Column("key", sa.String(length=255), nullable=False),
        sa.Column("request_hash", sa.String(length=64), nullable=False),
        sa.Column("response_status", sa.Integer(), nullable=False),
        sa.Column("response_body", sa.JSON(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("caller", "key", name="uq_idempotency_caller_key"),
    )
    op.create_table(
        "players",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("display_name", sa.String(length=100), nullable=True),
        sa.Column("external_ref", sa.String(length=255), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("external_ref"),
    )
    op.create_table(
        "api_tokens",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("token_hash", sa.String(length=64), nullable=False),
        sa.Column("role", sa.String(length=16), nullable=False),
        sa.Column("name", sa.String(length=100), nullable=True),
        sa.Column("player_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["player_id"],
            ["players.id"],
        ),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("token_hash"),
    )
    op.create_table(
        "seed_pairs",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column(
            "player_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False
        ),
        sa.Column("server_seed", sa.String(length=64), nullable=False),
        sa.Column("server_seed_hash", sa.String(length=64), nullable=False),
        sa.Column("client_seed", sa.String(length=64), nullable=False),
        sa.Column("next_nonce", sa.BigInteger(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("revealed_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(
            ["player_id"],
            ["players.id"],
        ),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("seed_pairs", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_seed_pairs_player_id"), ["player_id"], unique=False)
        batch_op.create_index(
            "uq_seed_pairs_one_active_per_player",
            ["player_id"],
            unique=True,
            sqlite_where=sa.text("revealed_at IS NULL"),
            postgresql_where=sa.text("revealed_at IS NULL"),
        )

    op.create_table(
        "hands",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column(
            "player_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False
        ),
        sa.Column("table_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column(
            "seed_pair_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False
        ),
        sa.Column("nonce", sa.BigInteger(), nullable=False),
        sa.Column("currency", sa.String(length=3), nullable=False),
        sa.Column("rules", sa.JSON(), nullable=False),
        sa.Column("status", sa.String(length=24), nullable=False),
        sa.Column("bet", sa.BigInteger(), nullable=False),
        sa.Column("tie_bet", sa.BigInteger(), nullable=False),
        sa.Column("raise_amount", sa.BigInteger(), nullable=False),
        sa.Column("player_card", sa.String(length=2), nullable=False),
        sa.Column("dealer_card", sa.String(length=2), nullable=False),
        sa.Column("war_burned", sa.JSON(), nullable=True),
        sa.Column("war_player_card", sa.String(length=2), nullable=True),
        sa.Column("war_dealer_card", sa.String(length=2), nullable=True),
        sa.Column("decision", sa.String(length=16), nullable=True),
        sa.Column("decided_by", sa.String(length=16), nullable=True),
        sa.Column("outcome", sa.String(length=16), nullable=True),
        sa.Column("total_staked", sa.BigInteger(), nullable=False),
        sa.Column("total_returned", sa.BigInteger(), nullable=True),
        sa.Column("net", sa.BigInteger(), nullable=True),
        sa.Column("balance_before", sa.BigInteger(), nullable=False),
        sa.Column("balance_after", sa.BigInteger(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("settled_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(
            ["player_id"],
            ["players.id"],
        ),
        sa.ForeignKeyConstraint(
            ["seed_pair_id"],
            ["seed_pairs.id"],
        ),
        sa.ForeignKeyConstraint(
            ["table_id"],
            ["casino_tables.id"],
        ),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("seed_pair_id", "nonce", name="uq_hands_seed_pair_nonce"),
        sqlite_autoincrement=True,
    )
    with op.batch_alter_table("hands", schema=None) as batch_op:
        batch_op.create_index("ix_hands_created_at", ["created_at"], unique=False)
        batch_op.create_index("ix_hands_player_id_id", ["player_id", "id"], unique=False)
        batch_op.create_index("ix_hands_status_created_at", ["status", "created_at"], unique=False)
        batch_op.create_index(
            "ix_hands_status_settled_at_id", ["status", "settled_at", "id"], unique=False
        )
        batch_op.create_index(batch_op.f("ix_hands_table_id"), ["table_id"], unique=False)
        batch_op.create_index(
            "uq_hands_one_unfinished_per_player",
            ["player_id"],
            unique=True,
            sqlite_where=sa.text("status = 'awaiting_decision'"),
            postgresql_where=sa.text("status = 'awaiting_decision'"),
        )


def downgrade() -> None:
    with op.batch_alter_table("hands", schema=None) as batch_op:
        batch_op.drop_index(
            "uq_hands_one_unfinished_per_player",
            sqlite_where=sa.text("status = 'awaiting_decision'"),
            postgresql_where=sa.text("status = 'awaiting_decision'"),
        )
        batch_op.drop_index(batch_op.f("ix_hands_table_id"))
        batch_op.drop_index("ix_hands_status_settled_at_id")
        batch_op.drop_index("ix_hands_status_created_at")
        batch_op.drop_index("ix_hands_player_id_id")
        batch_op.drop_index("ix_hands_created_at")

    op.drop_table("hands")
    with op.batch_alter_table("seed_pairs", schema=None) as batch_op:
        batch_op.drop_index(
            "uq_seed_pairs_one_active_per_player",
            sqlite_where=sa.text("revealed_at IS NULL"),
            postgresql_where=sa.text("revealed_at IS NULL"),
        )
        batch_op.drop_index(batch_op.f("ix_seed_pairs_player_id"))

    op.drop_table("seed_pairs")
    op.drop_table("api_tokens")
    op.drop_table("players")
    op.drop_table("idempotency_records")
    op.drop_table("casino_tables")
