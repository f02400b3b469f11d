"""Free games of the War family: the games, and their turns as an append-only log.

Revision ID: 0005_war_games
Revises: 0004_hash_chains
Create Date: 2026-11-24
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0005_war_games"
down_revision: str | None = "0004_hash_chains"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

Id = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
MESSAGE = "war_game_turns is append-only"

SQLITE_TRIGGERS = [
    f"""
    CREATE TRIGGER war_game_turns_no_{op_name} BEFORE {op_name.upper()} ON war_game_turns
    BEGIN SELECT RAISE(ABORT, '{MESSAGE}: {op_name} refused'); END
    """
    for op_name in ("update", "delete")
]
POSTGRESQL_TRIGGERS = [
    f"""
    CREATE FUNCTION war_game_turns_refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        RAISE EXCEPTION '% on % refused: {MESSAGE}', TG_OP, TG_TABLE_NAME
            USING ERRCODE = 'restrict_violation';
    END
    $$
    """,
    """
    CREATE TRIGGER war_game_turns_immutable BEFORE UPDATE OR DELETE ON war_game_turns
    FOR EACH ROW EXECUTE FUNCTION war_game_turns_refuse_change()
    """,
    """
    CREATE TRIGGER war_game_turns_no_truncate BEFORE TRUNCATE ON war_game_turns
    FOR EACH STATEMENT EXECUTE FUNCTION war_game_turns_refuse_change()
    """,
]


def upgrade() -> None:
    op.create_table(
        "war_games",
        sa.Column("id", Id, nullable=False),
        sa.Column("player_id", Id, nullable=False),
        sa.Column("variant", sa.String(length=32), nullable=False),
        sa.Column("rules", sa.JSON(), nullable=False),
        sa.Column("seats", sa.JSON(), nullable=False),
        sa.Column("server_seed", sa.String(length=64), nullable=False),
        sa.Column("server_seed_hash", sa.String(length=64), nullable=False),
        sa.Column("client_seed", sa.String(length=64), nullable=False),
        sa.Column("nonce", sa.BigInteger(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("turns", sa.Integer(), nullable=False),
        sa.Column("state", sa.JSON(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(["player_id"], ["players.id"]),
        sa.PrimaryKeyConstraint("id"),
        sqlite_autoincrement=True,
    )
    op.create_index("ix_war_games_player_id_id", "war_games", ["player_id", "id"])
    op.create_table(
        "war_game_turns",
        sa.Column("id", Id, nullable=False),
        sa.Column("game_id", Id, nullable=False),
        sa.Column("turn", sa.Integer(), nullable=False),
        sa.Column("input", sa.JSON(), nullable=False),
        sa.Column("record", sa.JSON(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["game_id"], ["war_games.id"]),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("game_id", "turn", name="uq_war_game_turns_game_turn"),
    )
    triggers = SQLITE_TRIGGERS if op.get_bind().dialect.name == "sqlite" else POSTGRESQL_TRIGGERS
    for statement in triggers:
        op.execute(statement)


def downgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        for op_name in ("update", "delete"):
            op.execute(f"DROP TRIGGER war_game_turns_no_{op_name}")
    op.drop_table("war_game_turns")
    op.drop_index("ix_war_games_player_id_id", table_name="war_games")
    op.drop_table("war_games")
    if op.get_bind().dialect.name == "postgresql":
        op.execute("DROP FUNCTION war_game_turns_refuse_change()")
