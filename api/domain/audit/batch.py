"""The hand-replay audit of a period, batch by batch, in the calling process; and of one hand.

The hot loop reads plain column tuples (`api.domain.audit.reads`), caches what the rules
say and seed commitments (`Replayer`), and fetches the ledger for a whole batch of hands in
two queries, so a long period streams through in constant memory. Nothing here writes.
`api.domain.audit.parallel` runs it in worker processes, one id range of the period each.
"""

import gc
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime

from sqlalchemy import ColumnElement, Connection
from sqlalchemy.orm import Session

from api.db.snapshot import connection_of
from api.domain.audit.checks import SETTLED, check_hand, ledger_window
from api.domain.audit.reads import BATCH, HandRow, batches, hands_between, one_hand
from api.domain.audit.replay import Replayer
from api.domain.audit.results import HandAuditResult, HandMismatch, SingleHandAudit
from api.domain.hands.ledger import (
    AccountCodes,
    LedgerTxn,
    fetch_hand_ledger,
    fetch_ledger_of_hands,
    other_wallet_movements,
    reference,
)


@dataclass(slots=True)
class _Tally:
    """The counts and mismatches so far, as batches complete."""

    hands_checked: int = 0
    settled: int = 0
    mismatches: list[HandMismatch] = field(default_factory=list)

    def result(self, seconds: float) -> HandAuditResult:
        return HandAuditResult(
            hands_checked=self.hands_checked,
            settled=self.settled,
            awaiting_decision=self.hands_checked - self.settled,
            mismatches=tuple(self.mismatches),
            seconds=seconds,
        )


def audit_hands(
    session_or_connection: Session | Connection,
    start: datetime | None = None,
    end: datetime | None = None,
    on_progress: Callable[[int], None] | None = None,
    *,
    batch: int = BATCH,
    after_id: int = 0,
    through_id: int | None = None,
) -> HandAuditResult:
    """Replay every hand created in [start, end) (UTC, either bound optional) and check it
    against its record and its ledger transactions. `on_progress` gets the count so far.

    `after_id` / `through_id` narrow it to the hands with ids in (after_id, through_id]: one
    chunk of `api.domain.audit.parallel`, which splits a period by id range."""
    connection = connection_of(session_or_connection)
    began = time.perf_counter()
    tally = _Tally()
    replayer = Replayer()
    codes = AccountCodes(connection)
    for rows in batches(connection, start, end, batch, after_id, through_id):
        # The batch is every hand of the period with an id from its first to its last.
        batch_hands = hands_between(rows[0].id, rows[-1].id, start, end)
        with _collector_paused():
            _audit_batch(connection, rows, batch_hands, replayer, codes, tally)
        if on_progress is not None:
            on_progress(tally.hands_checked)
    return tally.result(time.perf_counter() - began)


@contextmanager
def _collector_paused() -> Iterator[None]:
    """The cyclic garbage collector off for one batch.

    A batch allocates a few hundred thousand short-lived objects (rows, transactions, derived
    hands), every one freed by its reference count when the batch is done: none is part of
    a cycle. The collector would still scan the young ones every 700 allocations: about a
    tenth of the audit's time, in memory traffic more than in instructions. What a batch
    does leave in a cycle (an exception's traceback) is collected after it.
    """
    if not gc.isenabled():
        yield
        return
    try:
        gc.disable()
        yield
    finally:
        gc.enable()


def _audit_batch(
    connection: Connection,
    rows: list[HandRow],
    batch_hands: ColumnElement[bool],
    replayer: Replayer,
    codes: AccountCodes,
    tally: _Tally,
) -> None:
    """One batch: its ledger (two queries), the wallet windows of its decided hands (a query
    each, where another transaction can lie inside), then every hand's checks."""
    ledger = fetch_ledger_of_hands(connection, batch_hands, codes, details=True)
    no_txns: list[LedgerTxn] = []
    hands = [(row, ledger.get(reference(row.id), no_txns)) for row in rows]
    windows = [
        window
        for row, txns in hands
        if row.decision is not None and (window := ledger_window(row, txns))
    ]
    moves = other_wallet_movements(connection, windows, codes) if windows else {}
    settled = 0
    for row, txns in hands:
        _, differences = check_hand(row, txns, replayer, moves.get(row.id, 0))
        if differences:
            tally.mismatches.append(HandMismatch(row.id, tuple(differences)))
        settled += row.status == SETTLED
    tally.settled += settled
    tally.hands_checked += len(rows)


def audit_one_hand(
    session_or_connection: Session | Connection, hand_id: int
) -> SingleHandAudit | None:
    """The replay of one hand, with the same checks as the period audit; None if no such hand."""
    connection = connection_of(session_or_connection)
    row = one_hand(connection, hand_id)
    if row is None:
        return None
    codes = AccountCodes(connection)
    own = reference(hand_id)
    txns = fetch_hand_ledger(connection, [own], codes, details=True).get(own, [])
    window = ledger_window(row, txns) if row.decision is not None else None
    moves = other_wallet_movements(connection, [window], codes) if window else {}
    replayer = Replayer()
    derived, differences = check_hand(row, txns, replayer, moves.get(row.id, 0))
    return SingleHandAudit(
        row, derived, tuple(differences), tuple(txns), replayer.commitment_ok(row)
    )
