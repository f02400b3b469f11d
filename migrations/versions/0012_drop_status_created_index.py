"""The index of every hand's (status, created_at) goes: another index finds what it found.

`ix_hands_status_created_at` served one kind of read: the hands awaiting a decision (the
ties the house resolves once overdue, the audit's unsettled stakes, the back office's list
of them). `ix_hands_status_settled_at_id`, which the payout reports page through, leads
with the status too, and finds those hands as fast; they are few (at most one a player), and
sorting them by creation costs nothing. (That is SQLite's choice on a database without
statistics, as the service keeps it; one that an operator has run ANALYZE on may walk the
index of `created_at` for the house's sweep instead, still one index read once in a while.)
Every other read by status is of settled hands, nearly all of them, which reads the table or
that same index.

Every hand paid for the index it no longer needs: an entry at its creation and another at
its settlement, and on SQLite a page of the WAL at each commit, 1.4 of the 32 pages a hand
writes (docs/performance-log.md, "A hand's WAL pages"). No rule and no answer rests on it.

Revision ID: 0012_drop_status_created_index
Revises: 0011_opening_reads_after_lock
Create Date: 2026-11-27
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0012_drop_status_created_index"
down_revision: str | None = "0011_opening_reads_after_lock"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.drop_index("ix_hands_status_created_at", table_name="hands")


def downgrade() -> None:
    op.create_index("ix_hands_status_created_at", "hands", ["status", "created_at"])
