"""The unique index on the ledger's hashes goes: the unique `seq` already guards what it did.

A transaction's hash covers its `seq` (`ledger.chain.transaction_hash`), so two rows with one
hash would have one `seq`, which its own unique index refuses; and the audit recomputes
every hash from the rows (`ledger.verify`), so the index guarded nothing the audit relies on.
No statement reads a transaction by its hash. Every posting paid for it all the same: a hash
lands anywhere in that index, so each transaction wrote a page of its own there, and the
pages split as they filled: 3.07 of the 30.57 pages a SQLite hand wrote to the WAL
(docs/performance-log.md, "The access line without its caller's place, and the chain's hash
index dropped").

PostgreSQL drops the constraint. SQLite cannot drop a table's own constraint, so the table
is rebuilt: its rows copied aside, the table dropped and made again without the constraint,
its rows put back with their ids, its indexes and its immutability triggers made again.
The entries' references to it go unchecked until every row is back (`defer_foreign_keys`);
then `foreign_key_check` must find nothing, and they are checked at once again. Nothing in
the ledger changes but the index: the rows, their ids, and every rule the triggers enforce
are as they were. The rebuild holds SQLite's write lock while it copies the table twice
(`casino-war db upgrade` of a database of 2,000 hands took 2.0 s in all), and the table's
statistics from an operator's `ANALYZE`, if any, go with it: run `ANALYZE` again afterwards.

Revision ID: 0013_drop_chain_hash_unique
Revises: 0012_drop_status_created_index
Create Date: 2026-11-27
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0013_drop_chain_hash_unique"
down_revision: str | None = "0012_drop_status_created_index"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

CONSTRAINT = "uq_ledger_transactions_hash"
COLUMNS = (
    "id, seq, kind, reference, idempotency_key, request_hash, metadata, posted_at, prev_hash, "
    "hash, chain"
)
COPY = "ledger_transactions_rebuilt"


def _sqlite_table(*, unique_hash: bool) -> str:
    """`ledger_transactions` as migrations 0001 and 0004 made it, with or without the
    unique hash; its columns in the same order."""
    hash_constraint = f",\n        CONSTRAINT {CONSTRAINT} UNIQUE (hash)" if unique_hash else ""
    return f"""
    CREATE TABLE ledger_transactions (
        id INTEGER NOT NULL,
        seq BIGINT NOT NULL,
        kind VARCHAR(64) NOT NULL,
        reference VARCHAR(255),
        idempotency_key VARCHAR(255) NOT NULL,
        request_hash VARCHAR(64) NOT NULL,
        metadata JSON NOT NULL,
        posted_at DATETIME NOT NULL,
        prev_hash VARCHAR(64) NOT NULL,
        hash VARCHAR(64) NOT NULL,
        chain INTEGER DEFAULT '1' NOT NULL,
        CONSTRAINT pk_ledger_transactions PRIMARY KEY (id),
        CONSTRAINT ck_ledger_transactions_seq_positive CHECK (seq >= 1),
        CONSTRAINT uq_ledger_transactions_seq UNIQUE (seq),
        CONSTRAINT uq_ledger_transactions_idempotency_key UNIQUE (idempotency_key){hash_constraint}
    )
    """


SQLITE_AFTER_REBUILD = [
    "CREATE INDEX ix_ledger_transactions_reference ON ledger_transactions (reference)",
    "CREATE INDEX ix_ledger_transactions_chain_seq ON ledger_transactions (chain, seq)",
    *(
        f"""
        CREATE TRIGGER ledger_transactions_no_{op_name} BEFORE {op_name.upper()}
        ON ledger_transactions
        BEGIN SELECT RAISE(ABORT, 'ledger_transactions is append-only: {op_name} refused'); END
        """
        for op_name in ("update", "delete")
    ),
]


def _rebuild_on_sqlite(*, unique_hash: bool) -> None:
    bind = op.get_bind()
    for statement in [
        "PRAGMA defer_foreign_keys = ON",  # the entries' references unchecked till rows are back
        f"CREATE TEMP TABLE {COPY} AS SELECT {COLUMNS} FROM ledger_transactions",
        "DROP TABLE ledger_transactions",  # its indexes and triggers with it
        _sqlite_table(unique_hash=unique_hash),
        f"INSERT INTO ledger_transactions ({COLUMNS}) SELECT {COLUMNS} FROM {COPY} ORDER BY id",
        f"DROP TABLE {COPY}",
        *SQLITE_AFTER_REBUILD,
    ]:
        op.execute(statement)
    dangling = bind.execute(sa.text("PRAGMA foreign_key_check(ledger_entries)")).fetchall()
    if dangling:
        raise RuntimeError(f"{len(dangling)} ledger entries lost their transaction")
    op.execute("PRAGMA defer_foreign_keys = OFF")  # the migrations after this one check at once


def upgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        _rebuild_on_sqlite(unique_hash=False)
    else:
        op.drop_constraint(CONSTRAINT, "ledger_transactions", type_="unique")


def downgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        _rebuild_on_sqlite(unique_hash=True)
    else:
        op.create_unique_constraint(CONSTRAINT, "ledger_transactions", ["hash"])
