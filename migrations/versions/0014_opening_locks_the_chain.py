"""PostgreSQL: a hand's opening read also takes its ledger locks, so that a hand waits twice.

A hand placed on PostgreSQL waited three times: the statement that locks the key and the
player and reads what the hand deals from (`0011_opening_reads_after_lock`); the balances
moved, the chain's head locked and the new transactions' ids drawn, whose answer the hand's
links need; then the postings, the head's move and the COMMIT. `hand_opening_locking_chain`
takes the middle wait's locks in the first: once `hand_opening_after_lock` has read the
opening, it locks the hand's three accounts (the player's wallet and held money, the
chain's house), in id order as the balances' UPDATE would, reads their balances, then locks
the chain's head and draws the ids. The ledger's lock order, accounts then head, is kept,
and the caller decides every limit from balances that no one else can move before its
COMMIT (`ledger.fresh.LockedChain`), so the writes need no answer and go with the COMMIT.

The locks are taken only for a hand that can be dealt: a player with an active pair and no
hand awaiting a decision, at an open table, whose accounts are all open. Otherwise the
answer is `hand_opening_after_lock`'s alone, and the hand is refused, or takes the path
that opens accounts and locks as it posts. The answer is that function's JSON array, then,
where the locks were taken, the balances by account code, the head's seq and hash, and the
ids drawn.

Revision ID: 0014_opening_locks_the_chain
Revises: 0013_drop_chain_hash_unique
Create Date: 2026-12-02
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0014_opening_locks_the_chain"
down_revision: str | None = "0013_drop_chain_hash_unique"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute(
            """
            CREATE FUNCTION hand_opening_locking_chain(
                opening_player bigint, opening_table bigint, opening_wallet varchar,
                opening_held varchar, opening_house varchar, opening_chain bigint,
                drawn_ids bigint
            ) RETURNS text LANGUAGE plpgsql VOLATILE AS $$
            DECLARE
                opening jsonb := CAST(
                    hand_opening_after_lock(opening_player, opening_table, opening_wallet)
                    AS jsonb
                );
                balances jsonb;
                head record;
            BEGIN
                IF opening IS NULL OR opening -> 5 <> 'null' OR opening -> 6 <> 'true' THEN
                    RETURN CAST(opening AS text);
                END IF;
                SELECT jsonb_object_agg(code, balance) INTO balances FROM (
                    SELECT code, balance FROM ledger_accounts
                    WHERE code IN (opening_wallet, opening_held, opening_house)
                    ORDER BY id FOR UPDATE
                ) AS locked;
                IF balances IS NULL OR NOT (
                    balances ? opening_wallet AND balances ? opening_held
                    AND balances ? opening_house
                ) THEN
                    RETURN CAST(opening AS text);
                END IF;
                SELECT seq, hash INTO head FROM ledger_chain_head
                WHERE id = opening_chain FOR UPDATE;
                RETURN CAST(
                    opening || jsonb_build_array(
                        balances, head.seq, head.hash,
                        ARRAY(
                            SELECT nextval('ledger_transactions_id_seq')
                            FROM generate_series(1, drawn_ids)
                        )
                    ) AS text
                );
            END
            $$
            """
        )


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute(
            "DROP FUNCTION hand_opening_locking_chain("
            "bigint, bigint, varchar, varchar, varchar, bigint, bigint)"
        )
