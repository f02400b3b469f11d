"""Idempotent execution of state-changing requests (api.md: Idempotency-Key).

A key's record is written in the same database transaction as the request's effects, so a
retried request can never bet twice: both committed or neither did. A refusal by the game,
the ledger or the service (a 4xx problem) is remembered too: it rolls the whole unit of
work back, and is then recorded in a transaction of its own while this process still holds
the key. The key then replays that refusal, and the request itself left no trace in the
money. Send a new key to try again. (No savepoint is needed: a refusal never has to keep
part of a transaction.)
"""

import hashlib
import json
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager, suppress
from datetime import UTC, datetime
from functools import lru_cache, partial
from typing import Any, Final, NamedTuple

import msgspec
from sqlalchemy.orm import Session

from api.db.database import Database
from api.domain.players.turn import PLAYER_LOCK, ReadAfterLock, note_locked, note_read
from api.domain.tokens.service import Principal
from api.http.problems import PROBLEM_MEDIA_TYPE, Problem, as_problem
from api.http.schemas import Answerable
from ledger.chain import is_flat_and_plain
from ledger.driver import Driver, Sql, driver_of

HEADER = "Idempotency-Key"
REPLAYED_HEADER = "Idempotent-Replayed"
MAX_KEY_LENGTH = 255

IN_FLIGHT = "idempotency_in_flight"
REUSED = "idempotency_key_reused"


def _in_flight() -> Problem:
    return Problem(409, IN_FLIGHT, "a request with this Idempotency-Key is still running")


def _reused() -> Problem:
    return Problem(422, REUSED, "this Idempotency-Key was used with a different request")


JSON_MEDIA_TYPE = "application/json"


class Answer(NamedTuple):
    """A command's answer, for whichever HTTP layer sends it: the framework's route, or
    the hot path (`api.http.hot_path`) that sends the same bytes without it."""

    status: int
    body: Any
    media_type: str = JSON_MEDIA_TYPE
    headers: Mapping[str, str] = {}


Operation = Callable[[Session], Answerable]


class PlayersTurn(msgspec.Struct, frozen=True):
    """An operation whose first step locks one player's row (`players.turn.lock_player_on`).

    On PostgreSQL the key's advisory lock then takes that row lock in the same statement, a
    round trip fewer; the operation's own lock finds it held. The order of the locks is the
    same either way: the key's, then the player's row, and the row only once the key is
    held, so a retry of a key still in flight elsewhere is refused at once (409)."""

    player_id: int
    work: Operation
    read_after_lock: Callable[[Session], ReadAfterLock | None] | None = None
    """PostgreSQL: the operation's opening read, which the same statement then runs once
    the row is held and the key has no record (`players.turn.ReadAfterLock`)."""

    def __call__(self, session: Session) -> Answerable:
        return self.work(session)


class _Stored(NamedTuple):
    request_hash: str
    response_status: int
    response_body: Any


def fingerprint(method: str, path: str, body: Any) -> str:
    """What 'the same request' means: the same method, path and (canonical) JSON body."""
    return hashlib.sha256(_canonical_request(method, path, body)).hexdigest()


_SORTED_JSON: Final = msgspec.json.Encoder(order="sorted")
_DELETE: Final = b"\x7f"


def _canonical_request(method: str, path: str, body: Any) -> bytes:
    """The bytes `json.dumps` writes of the request, sorted, compact and ASCII: every key
    ever recorded is of them. A flat body of plain values (every command on the hot path
    sends one) is written by msgspec in a tenth of the time, where that gives the same
    bytes. The two escape alike (`ledger.chain`) but for what `json.dumps` escapes to ASCII
    and msgspec leaves as it is, a character past `~`, or cannot write, a lone surrogate:
    those are written by `json.dumps` (`tests/api/test_idempotency_fingerprint.py`). The
    fast path rests on the ledger's "plain" meaning exactly `str`, `bool`, None and 64-bit
    `int`, whose text the two encoders write alike."""
    if type(method) is str and type(path) is str and type(body) is dict and is_flat_and_plain(body):
        with suppress(UnicodeEncodeError):  # a lone surrogate, which json.dumps escapes
            encoded = _SORTED_JSON.encode([method, path, body])
            if encoded.isascii() and _DELETE not in encoded:
                return encoded
    return json.dumps([method, path, body], sort_keys=True, separators=(",", ":")).encode()


def advisory_lock_key(caller: str, key: str) -> int:
    digest = hashlib.sha256(f"{caller}\x00{key}".encode()).digest()
    return int.from_bytes(digest[:8], "big", signed=True)


class Idempotency:
    """Runs each (caller, key) at most once and replays its first response afterwards."""

    def __init__(self, database: Database) -> None:
        self._database = database
        self._running: set[tuple[str, str]] = set()
        self._running_lock = threading.Lock()

    @contextmanager
    def in_flight(self, caller: str, key: str) -> Iterator[None]:
        """Mark a key as running in this process; a second request for it is refused.

        Other processes see the key through a PostgreSQL advisory lock (`_claim`); SQLite
        serialises writers across processes, so there a second request waits and replays.
        """
        with self._running_lock:
            if (caller, key) in self._running:
                raise _in_flight()
            self._running.add((caller, key))
        try:
            yield
        finally:
            with self._running_lock:
                self._running.discard((caller, key))

    async def execute(
        self,
        principal: Principal,
        key: str,
        request_fingerprint: str,
        operation: Callable[[Session], Answerable],
        *,
        status_code: int,
    ) -> Answer:
        """`run` where it costs least (`Database.run_units`)."""
        work = partial(
            self.run, principal, key, request_fingerprint, operation, status_code=status_code
        )
        return await self._database.run_units(work)

    def run(
        self,
        principal: Principal,
        key: str,
        request_fingerprint: str,
        operation: Callable[[Session], Answerable],
        *,
        status_code: int,
    ) -> Answer:
        with self.in_flight(principal.caller, key):
            try:
                with self._database.transaction() as session:
                    earlier = self._claim(session, principal.caller, key, operation)
                    if earlier is not None:
                        return _replay(earlier, request_fingerprint)
                    result = _refusing(operation, session)
                    body, stored = result.bodies()
                    _record(session, principal, key, request_fingerprint, status_code, stored)
                    return Answer(status_code, body)
            except _Refusal as refused:  # the unit of work has been rolled back whole
                return self._remember_refusal(principal, key, request_fingerprint, refused.problem)

    def _remember_refusal(
        self, principal: Principal, key: str, request_fingerprint: str, refusal: Problem
    ) -> Answer:
        """Record the refusal in a transaction of its own, the key still held, so that a
        retry replays it; the refused work itself left nothing behind."""
        with self._database.transaction() as session:
            earlier = self._claim(session, principal.caller, key)
            if earlier is not None:
                return _replay(earlier, request_fingerprint)
            _record(session, principal, key, request_fingerprint, refusal.status, refusal.body())
        return problem_answer(refusal)

    def _claim(
        self, session: Session, caller: str, key: str, operation: Operation | None = None
    ) -> _Stored | None:
        """Hold the key for this transaction and return its record if it has one.

        On PostgreSQL an advisory lock holds it across processes (with the player's row, for
        a `PlayersTurn`), and the same statement reads the record once the lock is held, in a
        snapshot of its own (migration `0010_key_record_after_lock`): it includes whatever
        the lock's previous holder committed, so a retry always finds the first answer. On
        SQLite the unit of work's `BEGIN IMMEDIATE` holds the key."""
        driver = driver_of(session)
        if not driver.is_postgresql:
            row = driver.first(RECORD_BY_KEY, {"caller": caller, "key": key})
            return None if row is None else _Stored(row[0], row[1], json.loads(row[2]))
        got, record = _lock_key(session, driver, caller, key, operation)
        if not got:
            raise _in_flight()
        return None if record is None else _Stored(*json.loads(record))


def _lock_key(
    session: Session, driver: Driver, caller: str, key: str, operation: Operation | None
) -> tuple[bool, str | None]:
    """PostgreSQL: whether this transaction got the key's advisory lock, and then the key's
    record as a JSON array, if it has one; a `PlayersTurn`'s player row is locked in the
    same statement, and its opening read run there once the row is held."""
    parameters = {"lock": advisory_lock_key(caller, key), "caller": caller, "key": key}
    if not isinstance(operation, PlayersTurn):
        row = driver.first(LOCK_KEY, parameters)
        assert row is not None  # a function in FROM gives its one row
        return bool(row[0]), row[1]
    parameters["player_id"] = operation.player_id
    read = operation.read_after_lock(session) if operation.read_after_lock else None
    if read is None:
        row = driver.first(LOCK_KEY_AND_PLAYER, parameters)
    else:
        if clashing := read.parameters.keys() & parameters.keys():
            raise ValueError(f"a read after the lock cannot name {sorted(clashing)}")
        row = driver.first(lock_key_player_and_read(read.call), {**read.parameters, **parameters})
    assert row is not None
    got, protected, record = row[:3]
    if got:
        note_locked(driver, operation.player_id, protected)
    if read is not None and row[3]:  # the statement ran the read
        note_read(driver, read, row[4])
    return bool(got), record


class _Refusal(Exception):
    """A refusal leaving the unit of work, so that the transaction rolls back."""

    def __init__(self, problem: Problem) -> None:
        super().__init__(problem.code)
        self.problem = problem


def _refusing(operation: Callable[[Session], Answerable], session: Session) -> Answerable:
    try:
        return operation(session)
    except Exception as error:
        refusal = as_problem(error)
        if refusal is None or refusal.status >= 500:
            raise
        raise _Refusal(refusal) from error


# Every state-changing request runs these, on the driver: on PostgreSQL the key's lock and
# its record in one statement; on SQLite its record alone (`RECORD_BY_KEY`); and the answer
# recorded (`INSERT_RECORD`). The lock's statements are public for the test that holds their
# read of the record to what the lock's previous holder committed; the record's, for
# benchmarks/lean_hand.py (SQLite), which must keep keys exactly as the service does.
_RECORD_ONCE_LOCKED = (
    "CASE WHEN got THEN idempotency_record_after_lock(:caller, :key) END AS record"
)
TAKING_THE_KEYS_LOCK = "FROM pg_try_advisory_xact_lock(:lock) AS got"
LOCK_KEY = Sql.of(f"SELECT got, {_RECORD_ONCE_LOCKED} {TAKING_THE_KEYS_LOCK}")
# The player's row is locked only once the key is: a retry of a key in flight elsewhere is
# refused at once, instead of waiting for the first request's row lock.
_LOCKING_KEY_AND_PLAYER = (
    f"SELECT got, CASE WHEN got THEN ({PLAYER_LOCK}) END AS protected, "
    f"{_RECORD_ONCE_LOCKED} {TAKING_THE_KEYS_LOCK}"
)
LOCK_KEY_AND_PLAYER = Sql.of(_LOCKING_KEY_AND_PLAYER)
# A player's command runs its read once the player's row is held (so the player exists)
# and only for a key without a record: a replay reads nothing and draws no id. Nor does it
# for a protected player: the reads take locks other players' commands wait for (their
# chain's head: `ledger_posting_locks`), and a protected player's checks query the player's
# history; such a command reads in statements of its own, without those locks, and takes
# them as it posts, after its checks.
_READ_RUNS = "protected IS FALSE AND record IS NULL"


@lru_cache(maxsize=16)
def lock_key_player_and_read(call: str) -> Sql:
    """`LOCK_KEY_AND_PLAYER`, then whether it ran the `call` of a command's opening read,
    and its answer. The locks are taken in a subquery kept apart (OFFSET 0, which the
    planner never flattens into the query around it), so the call runs on the row that
    subquery gives, once both locks are held."""
    return Sql.of(
        f"SELECT got, protected, record, {_READ_RUNS} AS read_runs, "
        f"CASE WHEN {_READ_RUNS} THEN {call} END "
        f"FROM ({_LOCKING_KEY_AND_PLAYER} OFFSET 0) AS locked"
    )


RECORD_BY_KEY = Sql.of(
    """
    SELECT request_hash, response_status, CAST(response_body AS TEXT)
    FROM idempotency_records WHERE caller = :caller AND "key" = :key
    """
)
INSERT_RECORD = Sql.of(
    """
    INSERT INTO idempotency_records
        (caller, "key", request_hash, response_status, response_body, created_at)
    VALUES (:caller, :key, :request_hash, :response_status, :response_body, :created_at)
    """
)


def _record(
    session: Session,
    principal: Principal,
    key: str,
    request_fingerprint: str,
    status: int,
    body: Any,
) -> None:
    driver = driver_of(session)
    driver.alongside(  # nothing reads it again before the COMMIT
        INSERT_RECORD,
        {
            "caller": principal.caller,
            "key": key,
            "request_hash": request_fingerprint,
            "response_status": status,
            "response_body": driver.json(body),
            "created_at": driver.time(datetime.now(UTC)),
        },
    )


def problem_answer(refusal: Problem) -> Answer:
    return Answer(refusal.status, refusal.body(), PROBLEM_MEDIA_TYPE, refusal.headers)


def _replay(record: _Stored, request_fingerprint: str) -> Answer:
    """The first response again, as stored: its JSON body, secrets nulled."""
    if record.request_hash != request_fingerprint:
        raise _reused()
    media_type = PROBLEM_MEDIA_TYPE if record.response_status >= 400 else JSON_MEDIA_TYPE
    return Answer(
        record.response_status,
        record.response_body,
        media_type,
        {REPLAYED_HEADER: "true"},
    )
