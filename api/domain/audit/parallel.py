"""The period audit's hand replay spread over worker processes, by hand-id range.

Replaying a hand needs only that hand's record, its seed pair, its table and its ledger
transactions, so hands are audited independently and a period splits into id ranges
("chunks") that worker processes replay side by side; the whole-ledger checks (hash chain,
trial balance, held, nonce continuity) walk everything in order and stay with the caller.

Consistency. The coordinator (the caller's connection, inside its `read_snapshot`) fixes the
hands to audit: their id span and count in its snapshot. Each worker reads its chunk inside
a `read_snapshot` of its own, so every hand is compared with ledger rows read in the same
snapshot as its record, which is all the per-hand checks need: a hand and its stake, raise,
settlement and wallet window are never read at two different instants. On PostgreSQL the
workers adopt the coordinator's own snapshot (`pg_export_snapshot`), so they read exactly
what it reads and the result is that of the serial audit. SQLite cannot share a snapshot:
a worker may see a hand that was awaiting a decision in the coordinator's snapshot already
settled (record and ledger together, so it still matches), and hands created since are
outside the coordinator's id span. The whole-ledger checks keep reading the coordinator's.

The coordinator does not sit idle while it waits: it takes chunks back from the end of the
queue (those no worker has started) and audits them itself, in its own snapshot, so the
workers' start-up (the fork server's imports) and the last chunks' stragglers cost less.
The mismatches of each chunk come back in id order and chunks are folded in id order, so
the result is exactly the serial audit's, whoever audited which chunk and whatever order
they finish in.
"""

import gc
import multiprocessing
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from datetime import datetime
from multiprocessing.context import BaseContext

from sqlalchemy import Connection, Engine, func, select
from sqlalchemy.engine import URL

from api.db.models import hands_table
from api.db.snapshot import export_snapshot, read_snapshot
from api.domain.audit.batch import audit_hands
from api.domain.audit.reads import BATCH, in_range
from api.domain.audit.results import HandAuditResult
from ledger.database import make_engine

# Hands per chunk: two batches, so a chunk amortises its snapshot and first reads, while a
# period makes enough chunks to keep every worker busy to the end (the last chunks finish at
# different times: smaller chunks, less idle waiting) and to move the progress bar.
CHUNK = 2 * BATCH

_engine: Engine | None = None  # a worker process's one engine, set by the pool initializer


@dataclass(frozen=True, slots=True)
class HandSpan:
    """The hands of a period, as the coordinator's snapshot sees them."""

    first_id: int
    last_id: int
    count: int


@dataclass(frozen=True, slots=True)
class Chunk:
    """One worker's share: the period's hands with ids in (after_id, through_id]."""

    start: datetime | None
    end: datetime | None
    after_id: int
    through_id: int
    batch: int
    snapshot: str | None  # PostgreSQL: the coordinator's exported snapshot


def hand_span(connection: Connection, start: datetime | None, end: datetime | None) -> HandSpan:
    """Lowest and highest id and the number of hands created in [start, end)."""
    query = in_range(
        select(func.min(hands_table.c.id), func.max(hands_table.c.id), func.count()), start, end
    )
    first, last, count = connection.execute(query).one()
    return HandSpan(first or 0, last or 0, int(count))


def id_ranges(span: HandSpan, chunk: int) -> list[tuple[int, int]]:
    """(after_id, through_id] ranges covering the span, each expected to hold about `chunk`
    hands: the span cut into equal widths (ids are dense: a sequence with rare holes)."""
    pieces = -(-span.count // chunk)
    width = -(-(span.last_id - span.first_id + 1) // pieces)
    return [
        (after, min(after + width, span.last_id))
        for after in range(span.first_id - 1, span.last_id, width)
    ]


def audit_hands_parallel(
    connection: Connection,
    start: datetime | None = None,
    end: datetime | None = None,
    on_progress: Callable[[int], None] | None = None,
    *,
    jobs: int,
    chunk: int = CHUNK,
    batch: int = BATCH,
) -> HandAuditResult:
    """`audit_hands` over [start, end) with up to `jobs` worker processes; the same result.

    In the calling process (no pool, `jobs` 1 in the result) when `jobs` is 1, when the period
    holds at most one chunk (a pool would cost more to start than it saves), and for an
    in-memory SQLite database (another process cannot open it). `on_progress` gets the
    running total of hands as chunks complete.
    """
    began = time.perf_counter()
    span = hand_span(connection, start, end) if jobs > 1 else None
    if span is None or span.count <= chunk or not _shareable(connection.engine.url):
        return audit_hands(connection, start, end, on_progress, batch=batch)
    snapshot = export_snapshot(connection)
    chunks = [
        Chunk(start, end, after, through, min(batch, chunk), snapshot)
        for after, through in id_ranges(span, chunk)
    ]
    workers = min(jobs, len(chunks))
    results = _run_pool(connection, chunks, workers, on_progress)
    return HandAuditResult.folded(results, seconds=time.perf_counter() - began, jobs=workers)


def _shareable(url: URL) -> bool:
    """Can another process open this database? Not an in-memory SQLite one."""
    return url.get_backend_name() != "sqlite" or url.database not in (None, "", ":memory:")


def _run_pool(
    connection: Connection,
    chunks: Sequence[Chunk],
    jobs: int,
    on_progress: Callable[[int], None] | None,
) -> list[HandAuditResult]:
    """Replay the chunks in a pool of `jobs` processes (and here, while waiting for them);
    their results in chunk (id) order, whoever audited each and whenever it finished.

    The URL (which may hold a password) goes to the workers through the pool's pipe, never
    on a command line, in a log line or in an error message.
    """
    pool = ProcessPoolExecutor(
        max_workers=jobs,
        mp_context=_context(),
        initializer=_start_worker,
        initargs=(connection.engine.url.render_as_string(hide_password=False),),
    )
    try:
        futures = [pool.submit(_audit_chunk, chunk) for chunk in chunks]
        results = _audit_here_while_waiting(connection, chunks, futures, on_progress)
        _collect(futures, results, on_progress)
    finally:
        # On an error (or Ctrl-C) the chunks not started are dropped rather than run.
        pool.shutdown(wait=True, cancel_futures=True)
    return [results[index] for index in range(len(chunks))]


def _audit_here_while_waiting(
    connection: Connection,
    chunks: Sequence[Chunk],
    futures: Sequence[Future[HandAuditResult]],
    on_progress: Callable[[int], None] | None,
) -> dict[int, HandAuditResult]:
    """The coordinator's own share, so that it is not idle while the workers start (a second
    or so: the fork server's imports, connections) and while they finish: chunks taken back
    from the end of the queue (a chunk no worker has started can be cancelled) and audited
    here, in the coordinator's snapshot, until every chunk left is under way in a worker."""
    results: dict[int, HandAuditResult] = {}
    for index in reversed(range(len(chunks))):
        if not futures[index].cancel():
            break
        results[index] = _audit_range(connection, chunks[index])
        _report(futures, results, on_progress)
    return results


def _collect(
    futures: Sequence[Future[HandAuditResult]],
    results: dict[int, HandAuditResult],
    on_progress: Callable[[int], None] | None,
) -> None:
    """The workers' chunks into `results`, reporting progress as each completes (any order)."""
    waiting = {future: index for index, future in enumerate(futures) if index not in results}
    for future in as_completed(waiting):
        results[waiting[future]] = future.result()
        _report(futures, results, on_progress)


def _report(
    futures: Sequence[Future[HandAuditResult]],
    results: dict[int, HandAuditResult],
    on_progress: Callable[[int], None] | None,
) -> None:
    """The running total: chunks collected, and those the workers finished meanwhile."""
    if on_progress is None:
        return
    finished = (
        future.result()
        for index, future in enumerate(futures)
        if index not in results and future.done() and not future.cancelled()
    )
    on_progress(sum(r.hands_checked for r in (*results.values(), *finished)))


def _context() -> BaseContext:
    """Workers never fork a process holding engines or threads: a fork server (which imports
    the audit once and forks clean workers from it) where there is one, else spawn."""
    if "forkserver" not in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("spawn")
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload([__name__])
    return context


def _start_worker(url: str) -> None:
    """Pool initializer: one engine per worker process, reused for all its chunks (the
    process's exit closes its connection).

    The worker does nothing but audit, whose objects die young (no reference cycles), so the
    objects alive now (modules, the engine) are moved out of the cyclic collector's sight
    (`gc.freeze`): otherwise each full collection rescans them all, a cost that grows with
    every chunk for nothing."""
    global _engine  # the pool initializer is how a worker process gets its state
    _engine = make_engine(url)
    gc.freeze()


def _audit_chunk(chunk: Chunk) -> HandAuditResult:
    """A worker's job: its id range, audited in a snapshot of its own (or the coordinator's)."""
    if _engine is None:
        raise RuntimeError("audit worker used without its pool initializer")
    with read_snapshot(_engine, chunk.snapshot) as connection:
        return _audit_range(connection, chunk)


def _audit_range(connection: Connection, chunk: Chunk) -> HandAuditResult:
    return audit_hands(
        connection,
        chunk.start,
        chunk.end,
        batch=chunk.batch,
        after_id=chunk.after_id,
        through_id=chunk.through_id,
    )
