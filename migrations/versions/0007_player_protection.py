"""Player protection: limits with their history, self-exclusions, and a flag on the player
that tells the hot path whether there is anything to check.

Revision ID: 0007_player_protection
Revises: 0006_hand_engine
Create Date: 2026-11-24
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0007_player_protection"
down_revision: str | None = "0006_hand_engine"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

Id = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    with op.batch_alter_table("players", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("protected", sa.Boolean(), nullable=False, server_default=sa.false())
        )
    op.create_table(
        "player_limits",
        sa.Column("id", Id, nullable=False),
        sa.Column("player_id", Id, nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("period", sa.String(length=8), nullable=True),
        sa.Column("currency", sa.String(length=3), nullable=True),
        sa.Column("amount", sa.BigInteger(), nullable=True),
        sa.Column("effective_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("token_id", Id, nullable=True),
        sa.ForeignKeyConstraint(["player_id"], ["players.id"]),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_player_limits_player_id_id", "player_limits", ["player_id", "id"])
    op.create_table(
        "self_exclusions",
        sa.Column("id", Id, nullable=False),
        sa.Column("player_id", Id, nullable=False),
        sa.Column("starts_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("until", sa.DateTime(timezone=True), nullable=True),
        sa.Column("reason", sa.String(length=500), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("token_id", Id, nullable=True),
        sa.ForeignKeyConstraint(["player_id"], ["players.id"]),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_self_exclusions_player_id_id", "self_exclusions", ["player_id", "id"])


def downgrade() -> None:
    op.drop_index("ix_self_exclusions_player_id_id", table_name="self_exclusions")
    op.drop_table("self_exclusions")
    op.drop_index("ix_player_limits_player_id_id", table_name="player_limits")
    op.drop_table("player_limits")
    with op.batch_alter_table("players", schema=None) as batch_op:
        batch_op.drop_column("protected")
