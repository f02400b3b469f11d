"""PostgreSQL: a player's command's opening read, run in the statement that locks the row.

Placing a hand first locks the player's row, then reads what the hand deals from and checks:
the active seed pair, the hand awaiting a decision if any, whether the table is open, the
wallet's balance, and the new hand's id drawn from its sequence. A deposit or a withdrawal
reads the wallet's balance. Each read had to be a statement of its own after the lock: a
statement sees the database as of its start (READ COMMITTED), and the row's previous holder
may commit a hand, a nonce or a balance between that start and the moment the row lock is
granted. A stale nonce would deal the cards of a hand already dealt (the unique index of a
pair's nonces would then refuse the hand's row, a 500 instead of a hand), and a stale
balance would be checked and answered as the wallet's when it no longer is.

These functions run the reads with a snapshot of their own, taken when they are called, as
the key's record's function does (`0010_key_record_after_lock`): the lock's statement calls
one once the row is held (`api.http.idempotency.lock_key_player_and_read`), and it sees what
the previous holder committed, a statement and a round trip fewer. `hand_opening_after_lock`
answers the row as one JSON array, in the order of `api.domain.hands.store.Opening`, or NULL
for a player without an active seed pair; its status is written into the query, so that it
reads the partial index of hands awaiting a decision whatever the player's history.
`account_balance_after_lock` answers an account's balance, or NULL for one never opened.

SQLite has no row locks (`BEGIN IMMEDIATE` serialises writers), and keeps each read as a
statement of its own.

Revision ID: 0011_opening_reads_after_lock
Revises: 0010_key_record_after_lock
Create Date: 2026-11-26
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0011_opening_reads_after_lock"
down_revision: str | None = "0010_key_record_after_lock"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute(
            """
            CREATE FUNCTION hand_opening_after_lock(
                opening_player bigint, opening_table bigint, opening_wallet varchar
            ) RETURNS text LANGUAGE plpgsql VOLATILE AS $$
            BEGIN
                RETURN (
                    SELECT CAST(
                        json_build_array(
                            sp.id, sp.server_seed, sp.server_seed_hash, sp.client_seed,
                            sp.next_nonce,
                            (
                                SELECT h.id FROM hands h
                                WHERE h.player_id = opening_player
                                    AND h.status = 'awaiting_decision'
                            ),
                            (SELECT t.is_open FROM casino_tables t WHERE t.id = opening_table),
                            (
                                SELECT a.balance FROM ledger_accounts a
                                WHERE a.code = opening_wallet
                            ),
                            nextval('hands_id_seq')
                        ) AS TEXT
                    )
                    FROM seed_pairs sp
                    WHERE sp.player_id = opening_player AND sp.revealed_at IS NULL
                );
            END
            $$
            """
        )
        op.execute(
            """
            CREATE FUNCTION account_balance_after_lock(account_code varchar)
            RETURNS bigint LANGUAGE plpgsql VOLATILE AS $$
            BEGIN
                RETURN (SELECT balance FROM ledger_accounts WHERE code = account_code);
            END
            $$
            """
        )


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute("DROP FUNCTION account_balance_after_lock(varchar)")
        op.execute("DROP FUNCTION hand_opening_after_lock(bigint, bigint, varchar)")
