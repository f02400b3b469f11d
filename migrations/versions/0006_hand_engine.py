"""Each hand records the game software's version and a hash of its rules.

Hands dealt before this migration keep both NULL: what dealt them was not recorded, and a
correction is not ours to invent.

Revision ID: 0006_hand_engine
Revises: 0005_war_games
Create Date: 2026-11-24
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0006_hand_engine"
down_revision: str | None = "0005_war_games"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("hands", schema=None) as batch_op:
        batch_op.add_column(sa.Column("engine_version", sa.String(length=16), nullable=True))
        batch_op.add_column(sa.Column("rules_hash", sa.String(length=64), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("hands", schema=None) as batch_op:
        batch_op.drop_column("rules_hash")
        batch_op.drop_column("engine_version")
