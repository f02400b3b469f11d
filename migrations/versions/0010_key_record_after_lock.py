"""PostgreSQL: a key's record read in the statement that takes the key's advisory lock.

A retried request must find the first request's answer. The key's lock is an advisory lock
taken with `pg_try_advisory_xact_lock`, and its record could only be read in the statement
after it: a statement sees the database as of its start (READ COMMITTED), and the lock's
previous holder may commit between that start and the moment the lock is granted. So every
state-changing request paid a statement and a round trip for that read alone.

A VOLATILE function takes a fresh snapshot for each query it runs, so this one, called in
the lock's statement once the lock is held, sees whatever the lock's previous holder
committed. This holds at READ COMMITTED, which `ledger.database.make_engine` pins on
PostgreSQL: at REPEATABLE READ every query reads the transaction's first snapshot.
PL/pgSQL rather than SQL: it keeps its query's plan on the connection, where a SQL function
plans its query again on every call up to PostgreSQL 17 (docs/performance-log.md, "The
key's record in the lock's statement"). Its answer is the record as one JSON array,
`[hash, status, body]`, or NULL.

SQLite has no advisory lock: a unit of work there starts with `BEGIN IMMEDIATE`, which
serialises writers, and its first statement reads the record.

Revision ID: 0010_key_record_after_lock
Revises: 0009_chain_head_check_by_index
Create Date: 2026-11-26
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0010_key_record_after_lock"
down_revision: str | None = "0009_chain_head_check_by_index"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute(
            """
            CREATE FUNCTION idempotency_record_after_lock(
                record_caller varchar, record_key varchar
            ) RETURNS text LANGUAGE plpgsql VOLATILE AS $$
            BEGIN
                RETURN (
                    SELECT CAST(
                        json_build_array(request_hash, response_status, response_body) AS TEXT
                    )
                    FROM idempotency_records
                    WHERE caller = record_caller AND "key" = record_key
                );
            END
            $$
            """
        )


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute("DROP FUNCTION idempotency_record_after_lock(varchar, varchar)")
