"""PostgreSQL: a command's opening read also takes its posting's locks, so that it waits twice.

A hand placed on PostgreSQL waited three times, a deposit or a withdrawal too: the
statement that locks the key and the player and reads what the command checks
(`0011_opening_reads_after_lock`); the balances moved, the chain's head locked and the new
transactions' ids drawn, whose answer the links need; then the postings, the head's move
and the COMMIT. `ledger_posting_locks` takes the middle wait's locks earlier, in the first
statement: the posting's accounts, in id order as the balances' UPDATE takes them, their
balances read, then the chain's head, then the ids. The ledger's lock order, accounts then
head, is kept, and the caller decides every limit from balances no one else can move
before its COMMIT (`ledger.fresh.LockedChain`), so its writes need no answer and go with
the COMMIT. Where an account is not open yet (a player's first hand or deposit), it locks
no head and answers NULL: the command opens the account and locks as it posts, as before.

A deposit's or a withdrawal's lock statement calls it directly, its answer holding the
wallet's balance, in place of `account_balance_after_lock` (kept, for processes of the
release before, until a later migration drops it). `hand_opening_locking_chain` calls it
once `hand_opening_after_lock` has read the opening, and only for a hand that can be dealt
(no hand awaiting a decision, an open table, a wallet that covers the stake): its answer is
that function's JSON array with the locks' answer, or NULL, after it. Neither runs for a
protected player (`api.http.idempotency`), whose checks query the player's history and run
before any lock another player's command could wait for.

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
        op.execute(_POSTING_LOCKS)
        op.execute(_HAND_OPENING_LOCKING_CHAIN)


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute(
            "DROP FUNCTION hand_opening_locking_chain("
            "bigint, bigint, varchar, varchar, varchar, bigint, bigint, bigint)"
        )
        op.execute("DROP FUNCTION ledger_posting_locks(bigint, bigint, varchar[])")


_POSTING_LOCKS = """
CREATE FUNCTION ledger_posting_locks(
    posting_chain bigint, drawn_ids bigint, VARIADIC posting_accounts varchar[]
) RETURNS jsonb LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    balances jsonb;
    head record;
BEGIN
    SELECT jsonb_object_agg(code, balance) INTO balances FROM (
        SELECT code, balance FROM ledger_accounts WHERE code = ANY(posting_accounts)
        ORDER BY id FOR UPDATE
    ) AS locked;
    IF balances IS NULL OR (
        SELECT count(*) FROM jsonb_object_keys(balances)
    ) < cardinality(posting_accounts) THEN
        RETURN NULL;
    END IF;
    SELECT seq, hash INTO head FROM ledger_chain_head WHERE id = posting_chain FOR UPDATE;
    RETURN jsonb_build_array(
        posting_chain, balances, head.seq, head.hash,
        ARRAY(
            SELECT nextval('ledger_transactions_id_seq') FROM generate_series(1, drawn_ids)
        )
    );
END
$$
"""
"""A posting's locks, taken ahead of it: its accounts in id order, their balances read,
then its chain's head, then `drawn_ids` transaction ids (`ledger.fresh.LockedChain.read`).
Where an account is not open it answers NULL, the accounts that are open locked (in the
ledger's order, as the posting will lock them anyway), the head not locked and no id
drawn."""

_HAND_OPENING_LOCKING_CHAIN = """
CREATE FUNCTION hand_opening_locking_chain(
    opening_player bigint, opening_table bigint, opening_wallet varchar,
    opening_held varchar, opening_house varchar, opening_chain bigint, drawn_ids bigint,
    opening_stake bigint
) RETURNS text LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    opening jsonb := CAST(
        hand_opening_after_lock(opening_player, opening_table, opening_wallet) AS jsonb
    );
    locks jsonb;
BEGIN
    IF opening IS NULL OR opening -> 5 <> 'null' OR opening -> 6 <> 'true'
        OR coalesce(CAST(opening ->> 7 AS bigint), 0) < opening_stake THEN
        RETURN CAST(opening AS text);
    END IF;
    locks := ledger_posting_locks(
        opening_chain, drawn_ids, opening_wallet, opening_held, opening_house
    );
    RETURN CAST(opening || jsonb_build_array(locks) AS text);
END
$$
"""
"""`hand_opening_after_lock`'s answer, then, for a hand that can be dealt (no hand awaiting
a decision, an open table, a wallet that covers `opening_stake`), the ledger's locks
(`ledger_posting_locks`), or NULL."""
