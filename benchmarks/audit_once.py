"""The audit that `benchmarks.instructions` counts, alone in its process:
`python -m benchmarks.audit_once URL HANDS` audits hands 1..HANDS in one process.

A module of its own so that the counted process imports only what the audit needs: every
instruction of its start-up is counted too (and cancels out of the cost per hand, but takes
valgrind a while to run through).
"""

import sys

from api.db.database import Database
from api.services.audit import audit_hands, read_snapshot

BATCH = 500  # hands per audit batch: the counted sizes are multiples of it


def audit_first_hands(database_url: str, hands: int) -> int:
    """Audit hands 1..`hands` in one process; the number checked (what the count covers)."""
    database = Database.connect(database_url)
    try:
        with read_snapshot(database.engine) as connection:
            result = audit_hands(connection, batch=BATCH, through_id=hands)
    finally:
        database.dispose()
    if result.mismatches:
        raise RuntimeError(f"{len(result.mismatches)} hands did not match their replay")
    return result.hands_checked


def main(arguments: list[str]) -> int:
    url, hands = arguments[0], int(arguments[1])
    checked = audit_first_hands(url, hands)
    if checked != hands:
        raise SystemExit(f"the database holds {checked} hands, not {hands}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
