"""PostgreSQL: the chain head's trigger reads one index entry a posting, not its whole chain.

The trigger (0004) finds its chain's newest transaction with `max(seq) ... WHERE chain =
NEW.id`. How to compute that is the planner's choice, and on a database too new for
autovacuum to have analyzed it (a new one, or one just restored), the planner aggregates
every index entry of the chain. A connection keeps the trigger's plan, so from then on
every posting read its whole chain, the chain growing with each posting, until the
table's statistics next changed (docs/performance-log.md, "PostgreSQL's prepared statements
and the chain head's plan"). Asked for `ORDER BY seq DESC LIMIT 1`, the planner of the same
unanalyzed database reads the (chain, seq) index backward from the chain's end, one entry
(`tests/ledger/test_ledger_chains.py` holds it to that). The rule itself is unchanged: a
head only moves forward, to the newest transaction of its own chain, with that
transaction's hash.

SQLite plans `max` over an index's leading column as one seek already; nothing changes there.

Revision ID: 0009_chain_head_check_by_index
Revises: 0008_accountability
Create Date: 2026-11-25
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0009_chain_head_check_by_index"
down_revision: str | None = "0008_accountability"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

MESSAGE = "ledger_chain_head only moves forward, to the newest transaction of its chain"
BY_INDEX = "(SELECT seq FROM ledger_transactions WHERE chain = NEW.id ORDER BY seq DESC LIMIT 1)"
BY_AGGREGATE = "(SELECT max(seq) FROM ledger_transactions WHERE true AND chain = NEW.id)"


def _to_newest(newest_seq: str) -> str:
    return f"""
    CREATE OR REPLACE FUNCTION ledger_chain_head_to_newest() RETURNS trigger
    LANGUAGE plpgsql AS $$
    BEGIN
        IF NEW.id IS DISTINCT FROM OLD.id
            OR NEW.seq <= OLD.seq
            OR NEW.seq IS DISTINCT FROM
                {newest_seq}
            OR NEW.hash IS DISTINCT FROM
                (SELECT hash FROM ledger_transactions WHERE seq = NEW.seq AND chain = NEW.id)
        THEN
            RAISE EXCEPTION '{MESSAGE}' USING ERRCODE = 'restrict_violation';
        END IF;
        RETURN NEW;
    END
    $$
    """


def upgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute(_to_newest(BY_INDEX))


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute(_to_newest(BY_AGGREGATE))
