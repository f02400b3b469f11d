"""SQLite's own share of a hand: the floor under any implementation of these writes.

`python -m benchmarks.sqlite_floor [--hands N] [--seconds S] [--pragma name=value]...
[--drop-index NAME]... [--rounds R]` records every statement the prototype of
`benchmarks.lean_hand` sends to SQLite while it plays N hands (a tie goes to war), each with
its parameters and its transaction's BEGIN and COMMIT. It then replays them on a copy of the
database as it stood before those hands, on a bare `sqlite3` connection set up as the
service sets up its own.
The replay runs no Python between the statements but a loop, so its CPU per hand is what
SQLite itself spends on the statements this schema needs: its parsing (cached), its B-tree
work on the tables and every index, the triggers and the WAL commit. In the same run it
loads the do-nothing endpoint as `benchmarks.hot_path` does and prints the floor as a
multiple of a do-nothing request, beside the goal's budget (issue 16: 4 do-nothing
requests a hand on SQLite). With `--pragma` or `--drop-index`, every round also replays on a
connection given those settings, or on a copy without those indexes, so that a change's
worth is weighed on SQLite's own work, where a whole hand's noise would hide it.

Once more, untimed, it replays them to count the pages their commits write to the WAL, per
hand, by the table or index each page belongs to (`wal_pages`; with a change, also without
its indexes): the commit is most of SQLite's work on a hand, and its cost follows its
pages, so this says what each index costs every hand, and what the six that only readers
need come to together.

An implementation that writes the same rows with the same schema cannot cost the server
less than this floor plus what parsing the HTTP request and sending the answer costs (the
do-nothing request), whatever language or framework serves it.
"""

import argparse
import json
import re
import shutil
import sqlite3
import statistics
import struct
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import closing, contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Self

from sqlalchemy import Engine
from sqlalchemy.engine import make_url

from api.cli.common import positive_int
from benchmarks import cpu, http_load, lean_hand, scratch, servers
from benchmarks.plan import FULL
from ledger.database import make_engine

COMMIT = "COMMIT"
ROLLBACK = "ROLLBACK"
_GOAL = 4  # issue 16: a SQLite hand costs at most 4 do-nothing requests of server CPU


@dataclass
class Recording:
    """The statements in the order SQLite received them; COMMIT and ROLLBACK as markers."""

    on: bool = False
    statements: list[tuple[str, Any]] = field(default_factory=list)

    def note(self, sql: str, parameters: Any = ()) -> None:
        if self.on:
            self.statements.append((sql, parameters))


def _recording_connection(recording: Recording) -> type[sqlite3.Connection]:
    class RecordingCursor(sqlite3.Cursor):
        def execute(self, sql: str, parameters: Any = (), /) -> Self:
            recording.note(sql, dict(parameters) if isinstance(parameters, dict) else parameters)
            return super().execute(sql, parameters)

    class RecordingConnection(sqlite3.Connection):
        def cursor(self, factory: Any = RecordingCursor) -> Any:
            return super().cursor(factory)

        def execute(self, sql: str, parameters: Any = (), /) -> sqlite3.Cursor:
            cursor: sqlite3.Cursor = self.cursor().execute(sql, parameters)
            return cursor

        def commit(self) -> None:
            recording.note(COMMIT)
            super().commit()

        def rollback(self) -> None:
            recording.note(ROLLBACK)
            super().rollback()

    return RecordingConnection


def _recording_engine(path: Path, recording: Recording) -> Engine:
    """The service's engine on `path`, its connections recording what they send."""
    factory = _recording_connection(recording)
    return make_engine(
        f"sqlite:///{path}",
        creator=lambda: sqlite3.connect(path, factory=factory, check_same_thread=False),
    )


def record(path: Path, service: http_load.Service, hands: int) -> Recording:
    """The prototype's statements for `hands` hands, played in turn by the service's players."""
    recording = Recording()
    engine = _recording_engine(path, recording)
    try:
        with engine.connect() as connection:
            prototype = lean_hand.LeanHands(connection)
            players = service.players
            for player in players:  # each token looked up before the recording starts
                prototype.caller(player.token)
            recording.on = True
            for number in range(hands):
                token = players[number % len(players)].token
                _play(prototype, token, service.table_id, f"floor-{number}")
    finally:
        engine.dispose()
    return recording


def _play(prototype: lean_hand.LeanHands, token: str, table_id: int, key: str) -> None:
    status, answer = prototype.run(token, key, "/v1/hands", {"table_id": table_id, "bet": 100})
    hand = json.loads(answer)
    if status != 201:
        raise RuntimeError(f"the prototype refused a hand: {status}")
    if hand["status"] == "awaiting_decision":
        path = f"/v1/hands/{hand['id']}/decision"
        prototype.run(token, f"{key}-war", path, {"action": "war"})


@dataclass(frozen=True, slots=True)
class Change:
    """What a replay is weighed with, against the database as the service sets it up."""

    pragmas: tuple[str, ...] = ()
    """Settings, `name=value`, given to the replay's connection."""
    dropped_indexes: tuple[str, ...] = ()
    """Indexes dropped from the replay's copy: what writing without each would save."""

    def __bool__(self) -> bool:
        return bool(self.pragmas or self.dropped_indexes)


@contextmanager
def _replaying_connection(path: Path, pragmas: Sequence[str] = ()) -> Iterator[sqlite3.Connection]:
    """A connection to the database at `path` as the service's engine sets one up (WAL, its
    pragmas), then given `pragmas` (`name=value`, a setting to weigh against the service's)."""
    engine = make_engine(f"sqlite:///{path}")
    try:
        pooled = engine.raw_connection()
        with closing(pooled):
            connection = pooled.driver_connection
            assert isinstance(connection, sqlite3.Connection)
            for pragma in pragmas:
                connection.execute(f"PRAGMA {pragma}")
            yield connection
    finally:
        engine.dispose()


def _replay(
    connection: sqlite3.Connection,
    recording: Recording,
    committed: Callable[[], None] = lambda: None,
) -> None:
    """The recorded statements in order, with only a loop between them; `committed` after
    each COMMIT."""
    cursor = connection.cursor()
    for sql, parameters in recording.statements:
        if sql == COMMIT:
            connection.commit()
            committed()
        elif sql == ROLLBACK:
            connection.rollback()
        else:
            cursor.execute(sql, parameters)


def replay_cpu_seconds(path: Path, recording: Recording, pragmas: Sequence[str] = ()) -> float:
    """CPU seconds of this process for replaying `recording` on the database at `path`
    (`_replaying_connection`)."""
    with _replaying_connection(path, pragmas) as connection:
        started = time.process_time()
        _replay(connection, recording)
        return time.process_time() - started


_WAL_HEADER_BYTES = 32
_FRAME_HEADER_BYTES = 24


def committed_frames(wal: bytes) -> list[int]:
    """The page number of each committed frame of a WAL file: the frames after its header
    that carry the header's salts (older ones, left from before a checkpoint reset the
    log, carry others), up to the last that ends a transaction (a transaction that never
    committed may have left frames after it)."""
    if len(wal) < _WAL_HEADER_BYTES:
        return []
    page_size = struct.unpack(">I", wal[8:12])[0]
    frame_bytes = _FRAME_HEADER_BYTES + page_size  # the log's header holds it whole
    salts = wal[16:24]
    pages: list[int] = []
    committed = 0
    for offset in range(_WAL_HEADER_BYTES, len(wal) - frame_bytes + 1, frame_bytes):
        page, commit_size = struct.unpack(">II", wal[offset : offset + 8])
        if wal[offset + 8 : offset + 16] != salts:
            break
        pages.append(page)
        if commit_size:  # the frame that ends a transaction holds the file's size after it
            committed = len(pages)
    return pages[:committed]


FREE_BEFORE = "(pages free before the replay)"
"""Where `wal_pages` counts the pages that were free when the replay began: the free list's
own, and the pages the writes took from it (an index dropped leaves its pages there)."""


def wal_pages(path: Path, recording: Recording, pragmas: Sequence[str] = ()) -> Counter[str]:
    """The pages the recording's commits write to the WAL, by the table or index each page
    belongs to (`sqlite_schema` for page 1, whose header records the file's size).

    A WAL frame is a page a transaction changed, written whole at its COMMIT, with two
    `pwrite` calls, and copied to the database by a later checkpoint: most of SQLite's
    work on a hand (docs/performance-log.md). The replay empties the WAL after each COMMIT
    (a checkpoint that writes what the service's automatic ones would, only sooner), so
    that each COMMIT's frames are read on their own. A page's owner is read from `dbstat`:
    one in use before the replay keeps its owner (checked), one added to the file by it
    has the owner it ends with, and one free before it (`FREE_BEFORE`) may have been the
    free list's before it was a table's."""
    wal = Path(f"{path}-wal")
    pages: list[int] = []
    with _replaying_connection(path, pragmas) as connection:
        owner_before = _page_owners(connection)
        file_pages = connection.execute("PRAGMA page_count").fetchone()[0]
        free_before = set(range(1, file_pages + 1)) - owner_before.keys()
        connection.execute("PRAGMA wal_autocheckpoint=0")

        def committed() -> None:
            pages.extend(committed_frames(wal.read_bytes()))
            busy, _, _ = connection.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
            if busy:  # the log was not emptied: the next COMMIT's frames would follow these
                raise RuntimeError("the WAL could not be emptied after a COMMIT")

        _replay(connection, recording, committed)
        owner = _page_owners(connection)
        labels = _index_labels(connection)
    moved = [page for page, name in owner_before.items() if owner.get(page) != name]
    freed = sorted(set(pages) - free_before - owner.keys())
    if moved or freed:
        raise RuntimeError(f"pages freed or moved during the replay: {(moved + freed)[:10]}")
    return Counter(
        FREE_BEFORE if page in free_before else labels.get(owner[page], owner[page])
        for page in pages
    )


def _page_owners(connection: sqlite3.Connection) -> dict[int, str]:
    """The table or index each page in use belongs to (page 1: `sqlite_schema`)."""
    return dict(connection.execute("SELECT pageno, name FROM dbstat"))


def _index_labels(connection: sqlite3.Connection) -> dict[str, str]:
    """Each index named with its table and columns: a constraint's own index has only a
    number for a name (`sqlite_autoindex_ledger_transactions_2`)."""
    labels: dict[str, str] = {}
    indexed = "SELECT name, tbl_name FROM sqlite_master WHERE type = 'index'"
    for name, table in connection.execute(indexed).fetchall():
        columns = [str(row[2]) for row in connection.execute(f'PRAGMA index_info("{name}")')]
        labels[name] = f"{name} ({table}: {', '.join(columns)})"
    return labels


_WRITTEN = ("hands", "ledger_transactions", "ledger_entries", "idempotency_records")


def rows_written(path: Path) -> dict[str, int]:
    """How many rows each table the hands write holds: the replay must end where the
    recording did, or it measured something else."""
    with closing(sqlite3.connect(path)) as connection:
        return {
            table: int(connection.execute(f"SELECT count(*) FROM {table}").fetchone()[0])
            for table in _WRITTEN
        }


@contextmanager
def _settled_copy(source: Path, name: str) -> Iterator[Path]:
    """A copy of the database with its WAL folded in, removed afterwards."""
    with closing(sqlite3.connect(source)) as connection:
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    target = source.with_name(name)
    shutil.copyfile(source, target)
    try:
        yield target
    finally:
        for suffix in ("", "-wal", "-shm"):
            Path(f"{target}{suffix}").unlink(missing_ok=True)


READERS_ONLY_INDEXES: tuple[str, ...] = (
    "ix_hands_created_at",  # the audit of a period (hands by their creation)
    "ix_hands_status_settled_at_id",  # the settled hands' pages; the hands awaiting a decision
    "ix_hands_table_id",  # the hands list filtered by table
    "ix_ledger_transactions_reference",  # a hand's postings by reference: audit, details
    "ix_ledger_entries_account_id_transaction_id",  # an account's statement
)
"""The secondary indexes a hand writes that only readers need: no rule of the ledger or the
game rests on them (docs/performance.md, "What meeting the goals would take")."""


def drop_indexes(path: Path, names: Sequence[str]) -> None:
    """Refuses a name that is not an index of the file, or is a constraint's own index
    (which has no SQL and goes only with its constraint): only indexes that a reader, not a
    rule, needs are weighed this way."""
    with closing(sqlite3.connect(path)) as connection:
        for name in names:
            found = connection.execute(
                "SELECT sql FROM sqlite_master WHERE type = 'index' AND name = ?", (name,)
            ).fetchone()
            if found is None or found[0] is None:  # a constraint's own index has no SQL
                raise ValueError(f"{name!r} is not an index that can be dropped")
            connection.execute(f'DROP INDEX "{name}"')
        connection.commit()


def _floors_ms(
    source: Path,
    before: Path,
    recording: Recording,
    hands: int,
    change: Change,
    rounds: int,
) -> dict[str, list[float]]:
    """CPU per hand of each replay, as the service sets SQLite up and, given a `change`,
    with it too: each on its own copy of `before`, the two alternating round after round."""
    variants = {"as_served": Change()} | ({"changed": change} if change else {})
    floors: dict[str, list[float]] = {name: [] for name in variants}
    for _ in range(rounds):
        for name, variant in variants.items():
            with _settled_copy(before, f"replayed-{name}.db") as replayed:
                drop_indexes(replayed, variant.dropped_indexes)
                cpu_seconds = replay_cpu_seconds(replayed, recording, variant.pragmas)
                floors[name].append(cpu_seconds * 1000 / hands)
                if rows_written(replayed) != rows_written(source):
                    raise RuntimeError("the replay did not write what the prototype wrote")
    return floors


def _pages_written(
    source: Path, before: Path, recording: Recording, change: Change
) -> Counter[str]:
    """The WAL pages the recording writes, by table or index (`wal_pages`), on a copy of
    `before` with `change` made."""
    with _settled_copy(before, "paged.db") as replayed:
        drop_indexes(replayed, change.dropped_indexes)
        pages = wal_pages(replayed, recording, change.pragmas)
        if rows_written(replayed) != rows_written(source):
            raise RuntimeError("the replay did not write what the prototype wrote")
    return pages


def _pages_per_hand(pages: Counter[str], hands: int) -> dict[str, Any]:
    """The pages a hand writes: in all, to the indexes only readers need (the labels start
    with the index's name), and by table or index, most first."""
    readers_only = sum(
        count for label, count in pages.items() if label.split(" (", 1)[0] in READERS_ONLY_INDEXES
    )
    return {
        "total": round(pages.total() / hands, 2),
        "readers_only_indexes": round(readers_only / hands, 2),
        "by_object": {label: round(count / hands, 2) for label, count in pages.most_common()},
    }


def measure(
    hands: int, seconds: float, change: Change = Change(), rounds: int = 1
) -> dict[str, Any]:
    plan = replace(FULL, duration_seconds=seconds)
    with scratch.scratch_database("sqlite", None, "floor") as url:
        service = lean_hand.prepared(url, plan)
        source = Path(make_url(url).database or "")
        with _settled_copy(source, "before.db") as before:
            recording = record(source, service, hands)
            floors = _floors_ms(source, before, recording, hands, change, rounds)
            pages = _pages_written(source, before, recording, Change())
            changed_pages = (
                _pages_written(source, before, recording, change) if change else Counter()
            )
    floor_ms = statistics.median(floors["as_served"])
    with servers.noop(plan.sqlite_workers) as noop:
        noop.wait_ready()
        meters = {"server": cpu.process_group(noop.pid)}
        clients: list[str | None] = [None] * plan.history_clients
        point = http_load.run_point(noop.base_url, clients, http_load.noop_step, plan, meters)
    noop_ms = point["cpu_ms_per_unit"]["server"]
    statements = [s for s, _ in recording.statements if s not in (COMMIT, ROLLBACK)]
    measured = {
        "hands": hands,
        "statements_per_hand": round(len(statements) / hands, 2),  # BEGIN included
        "floor_cpu_ms_per_hand": round(floor_ms, 4),
        "noop_cpu_ms_per_request": noop_ms,
        "floor_vs_noop": round(floor_ms / noop_ms, 3) if noop_ms else None,
        "goal_vs_noop": _GOAL,
        "wal_pages_per_hand": _pages_per_hand(pages, hands),
    }
    if change:
        changed = statistics.median(floors["changed"])
        measured["changed"] = {
            "pragmas": list(change.pragmas),
            "dropped_indexes": list(change.dropped_indexes),
            "rounds_ms": {name: [round(ms, 4) for ms in values] for name, values in floors.items()},
            "floor_cpu_ms_per_hand": round(changed, 4),
            "against_as_served": round(changed / floor_ms, 3),
            "wal_pages_per_hand": _pages_per_hand(changed_pages, hands),
        }
    return measured


_PRAGMA = re.compile(r"\w+=[\w.-]+")


def _pragma(text: str) -> str:
    """A setting as `name=value`: it is written into the PRAGMA statement as it is."""
    if not _PRAGMA.fullmatch(text):
        raise argparse.ArgumentTypeError(f"not name=value: {text!r}")
    return text


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.sqlite_floor", description=__doc__)
    parser.add_argument("--hands", type=int, default=5_000)
    parser.add_argument("--seconds", type=float, default=6.0, help="the do-nothing load's window")
    parser.add_argument(
        "--pragma",
        action="append",
        default=[],
        type=_pragma,
        help="a setting (name=value, repeatable) to replay with as well, round after round",
    )
    parser.add_argument(
        "--drop-index",
        action="append",
        default=[],
        help="an index (repeatable) to replay without as well, round after round",
    )
    parser.add_argument("--rounds", type=positive_int, default=1)
    options = parser.parse_args(argv)
    change = Change(tuple(options.pragma), tuple(options.drop_index))
    measured = measure(options.hands, options.seconds, change, options.rounds)
    json.dump(measured, sys.stdout, indent=2)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
