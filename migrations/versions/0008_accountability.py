"""Accountability: who asked for every change, tokens with a life cycle, and the
significant-events log, hash-chained and immutable like the ledger.

Rows from before this migration have no actor (NULL): who made them was not recorded.

Revision ID: 0008_accountability
Revises: 0007_player_protection
Create Date: 2026-11-24
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0008_accountability"
down_revision: str | None = "0007_player_protection"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

Id = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
GENESIS_HASH = "0" * 64
ACTOR_COLUMNS = {
    "hands": ("placed_by_token", "decided_by_token"),
    "seed_pairs": ("created_by_token",),
    "casino_tables": ("created_by_token",),
    "players": ("created_by_token",),
    "war_games": ("created_by_token",),
    "war_game_turns": ("played_by_token",),
}
MESSAGE = "events is append-only"
SQLITE_TRIGGERS = [
    f"""
    CREATE TRIGGER events_no_{op_name} BEFORE {op_name.upper()} ON events
    BEGIN SELECT RAISE(ABORT, '{MESSAGE}: {op_name} refused'); END
    """
    for op_name in ("update", "delete")
]
POSTGRESQL_TRIGGERS = [
    f"""
    CREATE FUNCTION events_refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        RAISE EXCEPTION '% on % refused: {MESSAGE}', TG_OP, TG_TABLE_NAME
            USING ERRCODE = 'restrict_violation';
    END
    $$
    """,
    """
    CREATE TRIGGER events_immutable BEFORE UPDATE OR DELETE ON events
    FOR EACH ROW EXECUTE FUNCTION events_refuse_change()
    """,
    """
    CREATE TRIGGER events_no_truncate BEFORE TRUNCATE ON events
    FOR EACH STATEMENT EXECUTE FUNCTION events_refuse_change()
    """,
]


def upgrade() -> None:
    with op.batch_alter_table("api_tokens", schema=None) as batch_op:
        batch_op.add_column(sa.Column("issued_by", Id, nullable=True))
        batch_op.add_column(sa.Column("expires_at", sa.DateTime(timezone=True), nullable=True))
        batch_op.add_column(sa.Column("revoked_at", sa.DateTime(timezone=True), nullable=True))
        batch_op.add_column(sa.Column("revoked_by", Id, nullable=True))
        batch_op.add_column(sa.Column("last_used_at", sa.DateTime(timezone=True), nullable=True))
    # A plain ADD COLUMN, not a batch: on SQLite a batch copies the table anew, and with it
    # would go the append-only triggers of war_game_turns.
    for table, columns in ACTOR_COLUMNS.items():
        for column in columns:
            op.add_column(table, sa.Column(column, Id, nullable=True))
    op.create_table(
        "events",
        sa.Column("id", Id, nullable=False),
        sa.Column("seq", sa.BigInteger(), nullable=False),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("type", sa.String(length=40), nullable=False),
        sa.Column("actor_token_id", Id, nullable=True),
        sa.Column("actor_role", sa.String(length=16), nullable=True),
        sa.Column("actor_name", sa.String(length=100), nullable=True),
        sa.Column("player_id", Id, nullable=True),
        sa.Column("subject", sa.JSON(), nullable=False),
        sa.Column("details", sa.JSON(), nullable=False),
        sa.Column("prev_hash", sa.String(length=64), nullable=False),
        sa.Column("hash", sa.String(length=64), nullable=False),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("seq", name="uq_events_seq"),
        sqlite_autoincrement=True,
    )
    op.create_index("ix_events_type_id", "events", ["type", "id"])
    op.create_index("ix_events_player_id_id", "events", ["player_id", "id"])
    op.create_index("ix_events_actor_token_id_id", "events", ["actor_token_id", "id"])
    op.create_index("ix_events_at", "events", ["at"])
    head = op.create_table(
        "events_head",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("seq", sa.BigInteger(), nullable=False),
        sa.Column("hash", sa.String(length=64), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    op.bulk_insert(head, [{"id": 1, "seq": 0, "hash": GENESIS_HASH}])
    triggers = SQLITE_TRIGGERS if op.get_bind().dialect.name == "sqlite" else POSTGRESQL_TRIGGERS
    for statement in triggers:
        op.execute(statement)


def downgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        for op_name in ("update", "delete"):
            op.execute(f"DROP TRIGGER events_no_{op_name}")
    op.drop_table("events_head")
    for name in ("ix_events_at", "ix_events_actor_token_id_id", "ix_events_player_id_id"):
        op.drop_index(name, table_name="events")
    op.drop_index("ix_events_type_id", table_name="events")
    op.drop_table("events")
    if op.get_bind().dialect.name == "postgresql":
        op.execute("DROP FUNCTION events_refuse_change()")
    for table, columns in ACTOR_COLUMNS.items():
        with op.batch_alter_table(table, schema=None) as batch_op:
            for column in columns:
                batch_op.drop_column(column)
    if op.get_bind().dialect.name == "sqlite":  # the batch copy of war_game_turns lost them
        for op_name in ("update", "delete"):
            op.execute(
                f"CREATE TRIGGER war_game_turns_no_{op_name} BEFORE {op_name.upper()} "
                f"ON war_game_turns BEGIN SELECT RAISE(ABORT, "
                f"'war_game_turns is append-only: {op_name} refused'); END"
            )
    with op.batch_alter_table("api_tokens", schema=None) as batch_op:
        for column in ("last_used_at", "revoked_by", "revoked_at", "expires_at", "issued_by"):
            batch_op.drop_column(column)
