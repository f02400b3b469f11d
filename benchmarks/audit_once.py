"""The audit that `benchmarks.instructions` counts, alone in its process:
`python -m benchmarks.audit_once HANDS`, with the database URL on stdin, audits hands
1..HANDS in one process.

A module of its own so that the counted process imports only what the audit needs: every
instruction of its start-up is counted too (it cancels out of the cost per hand, but
valgrind takes a while to run through it). The URL comes on stdin, never on the command
line, where other users' `ps` and valgrind's own report would show a password in it.
"""

import sys

from api.db.database import Database
from api.db.snapshot import read_snapshot
from api.domain.audit.batch import audit_hands

# Hands per audit batch: a quarter of the audit's own 2,000, so that the counted sizes
# (1,000 and 3,000 hands by default) are whole batches and the count stays under a minute.
# A batch's fixed cost (three queries) is a few hundred instructions a hand at this size.
BATCH = 500


def audit_first_hands(database_url: str, hands: int) -> None:
    """Audit hands 1..`hands` in one process; refuse a database that holds fewer, or whose
    hands do not match their replay (the count would not be of the usual work)."""
    database = Database.connect(database_url)
    try:
        with read_snapshot(database.engine) as connection:
            result = audit_hands(connection, batch=BATCH, through_id=hands)
    finally:
        database.dispose()
    if result.hands_checked != hands:
        raise RuntimeError(f"the database holds {result.hands_checked} hands, not {hands}")
    if result.mismatches:
        raise RuntimeError(f"{len(result.mismatches)} hands did not match their replay")


if __name__ == "__main__":
    audit_first_hands(sys.stdin.readline().strip(), int(sys.argv[1]))
