"""The leanest hand path this stack allows: the service's rows and checks, and as little
Python between its statements as a hand needs.

`python -m benchmarks.bare_hand --port P [--workers N]` serves `POST /v1/hands` and `POST
/v1/hands/{id}/decision` on `CASINO_WAR_DATABASE_URL` (SQLite or PostgreSQL, a connection per
worker process), served by `api.server.serve` like the do-nothing endpoint. It asks whether
the goals of issue 16 (a hand for at most 4 do-nothing requests of server CPU on SQLite, 5
on PostgreSQL) can be met by any hand path in Python on this schema, where
`benchmarks.lean_hand` asks what the product's own code costs with nothing around it.

It sends the database what the service's hot path sends, statement for statement (on
SQLite, the statements `benchmarks.sqlite_floor` replays; on PostgreSQL also the key's
advisory lock and the row locks), with positional parameters on the driver's connection.
The game, the hash chain and the fingerprints are the product's functions (`casino.hand`,
`ledger.chain`, `api.http.idempotency`), so every hand it writes passes `casino-war
audit`. What it has no Python for is what the product builds around them: SQLAlchemy, the
ledger's pending transactions and links, the statement builders, value objects for reads
that are used once. A table's rules and a player's accounts are read once, as the service
remembers them. Like `benchmarks.lean_hand` it leaves out the framework, the access log,
problem bodies, protected players and opening accounts (`lean_hand.prepared` sets the
database up), and answers with the hand's id, status and money.

Other shapes of the same hand, each a question put to the goals (docs/performance.md):
`--combined` places a hand on PostgreSQL in six round trips instead of fourteen; `--grouped`
commits the SQLite hands that arrive together once (`GroupCommit`); `--optimistic` places a
hand on PostgreSQL in two statements and no lock; `--exchanged` places it with the locks and
statements of `--combined` in two round trips, through the service's own exchanges with
libpq (`ledger.pq_exchange`).

A measuring instrument, not a second implementation: `benchmarks.hot_path` loads it in the
same rounds as the service, the lean prototype and the do-nothing endpoint.
"""

import argparse
import asyncio
import collections
import functools
import json
import os
import sys
from collections.abc import Awaitable, Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import msgspec
import psycopg
from litestar.enums import ScopeType
from litestar.types import Receive, Scope, Send
from psycopg import _queries as psycopg_queries
from psycopg import errors as psycopg_errors

from api.domain.hands.ledger import reference
from api.domain.hands.postings import HandAccounts
from api.domain.tokens.service import hash_token
from api.http.hardening import read_body
from api.http.idempotency import advisory_lock_key, fingerprint
from api.server import serve
from benchmarks import lean_hand, servers
from casino.errors import GameError
from casino.fairness import HandSeeds
from casino.hand import Action, Hand, HandStatus, deal, decide, play
from casino.rules import TableRules
from casino.version import ENGINE_VERSION, rules_hash
from ledger.batch import INT64_MAX, INT64_MIN
from ledger.chain import request_fingerprint, transaction_hash
from ledger.chains import next_seq
from ledger.database import json_text, make_engine
from ledger.pq_exchange import Exchanges, Statement

_TOKEN = "SELECT id, player_id FROM api_tokens WHERE token_hash = ? AND revoked_at IS NULL"
_RECORD = (
    "SELECT request_hash, response_status, CAST(response_body AS TEXT) "
    'FROM idempotency_records WHERE caller = ? AND "key" = ?'
)
_INSERT_RECORD = (
    'INSERT INTO idempotency_records (caller, "key", request_hash, response_status, '
    "response_body, created_at) VALUES (?, ?, ?, ?, ?, ?)"
)
_PLAYER = "SELECT protected FROM players WHERE id = ?{for_update}"
_LOCK_KEY = "SELECT pg_try_advisory_xact_lock(?)"
_RULES = "SELECT CAST(rules AS TEXT) FROM casino_tables WHERE id = ?"
_ACCOUNTS = "SELECT code, id, side, min_balance FROM ledger_accounts WHERE code IN (?, ?, ?)"
_OPENING = (
    "SELECT sp.id, sp.server_seed, sp.client_seed, sp.next_nonce, "
    "(SELECT h.id FROM hands h WHERE h.player_id = ? AND h.status = 'awaiting_decision'), "
    "(SELECT t.is_open FROM casino_tables t WHERE t.id = ?), "
    "(SELECT a.balance FROM ledger_accounts a WHERE a.code = ?) "
    "FROM seed_pairs sp WHERE sp.player_id = ? AND sp.revealed_at IS NULL"
)
_INSERT_HAND = (
    "INSERT INTO hands (player_id, table_id, seed_pair_id, nonce, currency, rules, status, "
    "bet, tie_bet, raise_amount, player_card, dealer_card, outcome, total_staked, "
    "total_returned, net, balance_before, balance_after, created_at, settled_at, "
    "engine_version, rules_hash, placed_by_token) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 0, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id"
)
_ADVANCE_NONCE = "UPDATE seed_pairs SET next_nonce = next_nonce + 1 WHERE id = ?"
_DECIDING = (
    "SELECT h.player_id, h.table_id, h.nonce, h.currency, CAST(h.rules AS TEXT), h.bet, "
    "h.tie_bet, h.decision, sp.server_seed, sp.client_seed "
    "FROM hands h JOIN seed_pairs sp ON sp.id = h.seed_pair_id WHERE h.id = ?"
)
_BALANCE = "SELECT balance FROM ledger_accounts WHERE id = ?"
_SETTLE_HAND = (
    "UPDATE hands SET decision = ?, decided_by = 'player', decided_by_token = ?, "
    "raise_amount = ?, total_staked = ?, war_burned = ?, war_player_card = ?, "
    "war_dealer_card = ?, status = ?, outcome = ?, total_returned = ?, net = ?, "
    "balance_after = ?, settled_at = ? WHERE id = ?"
)
# The ledger's five statements (`ledger.fresh.post_new`), for a batch of at most two
# transactions moving at most three accounts.
_LOCK_HEAD = "SELECT seq, hash FROM ledger_chain_head WHERE id = ?{for_update}"
_MOVE_HEAD = "UPDATE ledger_chain_head SET seq = ?, hash = ? WHERE id = ?"
_TRANSACTION_COLUMNS = (
    "seq, chain, kind, reference, idempotency_key, request_hash, metadata, posted_at, "
    "prev_hash, hash"
)


@functools.cache
def _move_balances(count: int) -> str:
    """Every balance in one UPDATE, each limit and 64-bit bound checked in it, as
    `ledger.fresh` does; `_move_parameters` lists its parameters."""
    case = "CASE id " + " ".join(["WHEN ? THEN ?"] * count) + " END"
    ids = ", ".join(["?"] * count)
    return (
        f"UPDATE ledger_accounts SET balance = balance + {case} WHERE id IN ({ids}) "
        f"AND balance <= {case} AND balance >= {case} "
        f"AND (min_balance IS NULL OR balance + {case} >= min_balance) RETURNING id, balance"
    )


def _move_parameters(moves: Sequence[tuple[int, int, int, int]]) -> list[object]:
    """`_move_balances`'s parameters for moves of (account id, delta, lowest, highest), in
    the order the statement names them: each CASE pairs an id with its value."""

    def case(values: Sequence[int]) -> list[object]:
        return [
            item for move, value in zip(moves, values, strict=True) for item in (move[0], value)
        ]

    return [
        *case([delta for _, delta, _, _ in moves]),
        *(move[0] for move in moves),
        *case([INT64_MAX - max(highest, 0) for _, _, _, highest in moves]),
        *case([INT64_MIN - min(lowest, 0) for _, _, lowest, _ in moves]),
        *case([lowest for _, _, lowest, _ in moves]),
    ]


@functools.cache
def _insert_transactions(count: int) -> str:
    rows = ", ".join(["(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"] * count)
    return f"INSERT INTO ledger_transactions ({_TRANSACTION_COLUMNS}) VALUES {rows} RETURNING id"


@functools.cache
def _insert_entries(count: int) -> str:
    rows = ", ".join(["(?, ?, ?, ?)"] * count)
    return (
        f"INSERT INTO ledger_entries (transaction_id, account_id, currency, amount) VALUES {rows}"
    )


# PostgreSQL in six round trips instead of fourteen (`--combined`): psycopg's BEGIN; the
# key's and the player's locks; one read of everything the hand needs, the chain's head
# locked and the new rows' ids drawn; one statement of every write but the head's (whose
# trigger must see the new transactions); the head; COMMIT.
_LOCKS = (
    "SELECT pg_try_advisory_xact_lock(%s), (SELECT protected FROM players WHERE id = %s FOR UPDATE)"
)
_READ_ALL = (
    "SELECT r.request_hash, r.response_status, CAST(r.response_body AS TEXT), "
    "sp.id, sp.server_seed, sp.client_seed, sp.next_nonce, "
    "(SELECT h.id FROM hands h WHERE h.player_id = %s AND h.status = 'awaiting_decision'), "
    "(SELECT t.is_open FROM casino_tables t WHERE t.id = %s), "
    "(SELECT a.balance FROM ledger_accounts a WHERE a.code = %s), head.seq, head.hash, "
    "nextval('hands_id_seq'), nextval('ledger_transactions_id_seq'), "
    "nextval('ledger_transactions_id_seq') "
    "FROM seed_pairs sp "
    "CROSS JOIN (SELECT seq, hash FROM ledger_chain_head WHERE id = %s FOR UPDATE) head "
    'LEFT JOIN idempotency_records r ON r.caller = %s AND r."key" = %s '
    "WHERE sp.player_id = %s AND sp.revealed_at IS NULL"
)


@functools.cache
def _write_all(transactions: int, entries: int, accounts: int) -> str:
    """Every write of a placed hand but the chain head's, in one statement; it answers with
    how many balances moved (fewer than `accounts`: a limit refused the hand) and whether the
    seed pair's nonce moved on from the one the hand was dealt with (under the player's
    lock it always does; `--optimistic` takes no lock)."""
    hand = _INSERT_HAND.replace("(player_id,", "(id, player_id,").replace("VALUES (", "VALUES (?, ")
    nonce = _ADVANCE_NONCE + " AND next_nonce = ?"
    moves = _move_balances(accounts)
    insert_transactions = (
        _insert_transactions(transactions)
        .replace(f"({_TRANSACTION_COLUMNS})", f"(id, {_TRANSACTION_COLUMNS})")
        .replace("(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
    )
    record = _INSERT_RECORD + " RETURNING caller"
    statement = (
        f"WITH hand AS ({hand}), nonce AS ({nonce} RETURNING id), moved AS ({moves}), "
        f"transactions AS ({insert_transactions}), "
        f"entries AS ({_insert_entries(entries)} RETURNING transaction_id), "
        f"record AS ({record}) {_WRITTEN}"
    )
    return statement.replace("?", "%s")


_WRITTEN = "SELECT (SELECT count(*) FROM moved), (SELECT count(*) FROM nonce)"


def _replaced(text: str, old: str, new: str) -> str:
    """`text` with `old` replaced by `new`; `old` must be there, so that a statement built
    from another cannot silently lose the change."""
    if old not in text:
        raise ValueError(f"{old!r} is not in the statement")
    return text.replace(old, new)


# PostgreSQL in two statements and no lock (`--optimistic`): `_READ_ALL` without its lock,
# and the protected flag; then `_write_all` and the head's move sent as one query, one
# implicit transaction, each part failing it (a division by zero) where what the read saw
# no longer holds: a balance moved by someone else or a limit, the nonce, the chain's head.
_PROTECTED_READ_TOO = (
    " FROM seed_pairs sp ",
    ", (SELECT p.protected FROM players p WHERE p.id = sp.player_id) FROM seed_pairs sp ",
)
_READ_OPTIMISTIC = _replaced(_replaced(_READ_ALL, " FOR UPDATE", ""), *_PROTECTED_READ_TOO)
_MOVE_HEAD_IF_UNMOVED = (
    "WITH head AS (UPDATE ledger_chain_head SET seq = %s, hash = %s WHERE id = %s AND seq = %s "
    "RETURNING 1) SELECT 1 / count(*) FROM head"
)
_OPTIMISTIC_ATTEMPTS = 5


@functools.cache
def _optimistic(write_all: str) -> str:
    """`_write_all` failing unless every balance moved, the nonce was the one read and the
    wallet ends where the read said it would, then the head moved on from where it was read."""
    checked = _replaced(
        write_all,
        _WRITTEN,
        "SELECT 1 / ((SELECT count(*) FROM moved) = %s AND (SELECT count(*) FROM nonce) = 1 "
        "AND (SELECT balance FROM moved WHERE id = %s) = %s)::int",
    )
    return f"{checked}; {_MOVE_HEAD_IF_UNMOVED}"


# PostgreSQL in two round trips (`--exchanged`): the locks and statements of `--combined`,
# each round trip one exchange (`ledger.pq_exchange`: one pipeline, one wait, each statement
# prepared once). The first: the BEGIN, the key's and the player's locks (the statement
# failing where the key is in flight), the read of everything, with the protected flag. The
# second: every write, failing where a limit refused a balance's move, the head's move, the
# COMMIT. An exchange answers with its last statement's rows, so what `--combined` learns
# from a statement's answer these learn by its failure. The lock's statement reads the
# protected flag only to take the player's row lock; the read reads it again.
_LOCKS_OR_FAIL = (
    "SELECT 1 / pg_try_advisory_xact_lock(%s)::int, "
    "(SELECT protected FROM players WHERE id = %s FOR UPDATE)"
)
_READ_LOCKED = _replaced(_READ_ALL, *_PROTECTED_READ_TOO)


@functools.cache
def _all_moved(write_all: str) -> str:
    """`_write_all` failing unless every balance moved and the nonce moved on."""
    return _replaced(
        write_all,
        _WRITTEN,
        "SELECT 1 / ((SELECT count(*) FROM moved) = %s AND (SELECT count(*) FROM nonce) = 1)::int",
    )


@functools.cache
def _named(text: str) -> tuple[str, tuple[str, ...]]:
    """`text` with its `%s` placeholders named, as the exchanges take them; the names."""
    parts = text.split("%s")
    names = tuple(f"p{index}" for index in range(len(parts) - 1))
    named = (part + f"%({name})s" for part, name in zip(parts[:-1], names, strict=True))
    return "".join(named) + parts[-1], names


def _statement(text: str, values: Sequence[object]) -> Statement:
    """A statement written for psycopg's cursor (`%s`), as `Exchanges.run` takes one."""
    named, names = _named(text)
    return named, dict(zip(names, values, strict=True))


@dataclass(frozen=True, slots=True)
class Writes:
    """A placed hand's writes but the head's: `_write_all` and its parameters, with what
    they must leave true."""

    statement: str
    parameters: list[object]
    moves: int  # balances the statement must move
    wallet: tuple[int, int]  # the wallet's id and its balance after the hand
    chain: int
    head_read: int  # the seq of the chain's head as read, which the write moves on from
    head: tuple[int, str]  # the chain's new head: seq and hash
    answer: bytes


class Refusal(Exception):
    """A request refused; its transaction is rolled back."""

    def __init__(self, status: int) -> None:
        super().__init__(status)
        self.status = status


@dataclass(frozen=True, slots=True)
class Table:
    """What a hand records of its table, computed once: the rules, as parsed, stored and hashed."""

    rules: TableRules
    stored: str
    hashed: str


@dataclass(frozen=True, slots=True)
class Books:
    """A player's three accounts in one currency: code, row id, normal side and limit."""

    chain: int
    currency: str
    wallet: str
    held: str
    house: str
    rows: dict[str, tuple[int, str, int | None]]


@dataclass(frozen=True, slots=True)
class Command:
    """A request to place or decide a hand, its caller known."""

    token_id: int
    player_id: int
    key: str
    path: str
    body: dict[str, Any]
    request_hash: str

    @property
    def caller(self) -> str:
        return f"token:{self.token_id}"


Transfer = tuple[str, str, int]  # debit code, credit code, amount
Step = tuple[str, list[Transfer], dict[str, str]]  # kind, transfers, metadata of its own


class Bare:
    """A driver's connection (`sqlite3` or psycopg) and its spelling of the statements,
    which are written with `?` placeholders and `{for_update}` where PostgreSQL locks."""

    def __init__(self, connection: Any, *, postgresql: bool, autocommit: bool = False) -> None:
        self.connection = connection
        self.postgresql = postgresql
        self._autocommit = autocommit and postgresql
        if self._autocommit:
            connection.autocommit = True
            self._client_side = psycopg.ClientCursor(connection)

    def run(self, sql: str, parameters: Sequence[object] = ()) -> Any:
        """The statement executed; its cursor."""
        return self.connection.execute(_spelled(sql, self.postgresql), parameters)

    def begin(self) -> None:
        """SQLite's write lock taken up front, as the service takes it; psycopg begins a
        transaction with the first statement, unless the connection is in autocommit
        (`--optimistic`), where a decision's transaction is begun here."""
        if not self.postgresql:
            self.connection.execute("BEGIN IMMEDIATE")
        elif self._autocommit:
            self.connection.execute("BEGIN")

    def run_together(self, sql: str, parameters: Sequence[object]) -> None:
        """PostgreSQL, autocommit: several statements in one query, one implicit transaction.
        psycopg binds their parameters on this side, the one way to send them in one message."""
        if not self._autocommit:
            raise RuntimeError("statements run together only on a connection in autocommit")
        self._client_side.execute(sql, parameters)

    def commit(self) -> None:
        self.connection.commit()

    def rollback(self) -> None:
        self.connection.rollback()

    def time(self, moment: datetime) -> object:
        """A UTC time as the service stores it: SQLAlchemy's SQLite text, or a `timestamptz`."""
        if self.postgresql:
            return moment
        return moment.astimezone(UTC).replace(tzinfo=None).isoformat(" ", "microseconds")


@functools.lru_cache(maxsize=64)
def _spelled(sql: str, postgresql: bool) -> str:
    if postgresql:
        return sql.replace("{for_update}", " FOR UPDATE").replace("?", "%s")
    return sql.replace("{for_update}", "")


class BareHands:
    """The two commands on one driver connection, in the service's order."""

    def __init__(
        self, db: Bare, *, combined: bool = False, optimistic: bool = False, exchanged: bool = False
    ) -> None:
        self.db = db
        self._combined = combined and db.postgresql
        self._optimistic = optimistic and db.postgresql
        self._exchanges = Exchanges(db.connection) if exchanged and db.postgresql else None
        self._callers: dict[str, tuple[int, int]] = {}
        self._tables: dict[int, Table | None] = {}
        self._recorded_rules: dict[str, TableRules] = {}
        self._books: dict[tuple[int, str], Books] = {}

    def caller(self, token: str) -> tuple[int, int]:
        found = self._callers.get(token)
        if found is None:
            row = self.db.run(_TOKEN, (hash_token(token),)).fetchone()
            self.db.rollback()
            if row is None or row[1] is None:
                raise Refusal(401)
            found = self._callers[token] = (int(row[0]), int(row[1]))
        return found

    def command(self, token: str, key: str, path: str, body: dict[str, Any]) -> Command:
        """A request's command, its caller known (a token not seen before is looked up in a
        transaction of its own)."""
        token_id, player_id = self.caller(token)
        return Command(token_id, player_id, key, path, body, fingerprint("POST", path, body))

    def run(self, command: Command) -> tuple[int, bytes]:
        """One command and its key's record in one transaction; a key seen before replays."""
        if self._optimistic and command.path == "/v1/hands":
            return self._place_optimistic(command)
        if self._combined and command.path == "/v1/hands":
            return self._place_combined(command)
        if self._exchanges is not None and command.path == "/v1/hands":
            return self._place_exchanged(self._exchanges, command)
        db = self.db
        db.begin()
        try:
            answer = self.apply(command)
            db.commit()
        except BaseException:
            db.rollback()
            raise
        return answer

    def apply(self, command: Command) -> tuple[int, bytes]:
        """`command`'s work and its key's record, inside a transaction begun by the caller,
        which commits it, or rolls it back if this raises (a refusal)."""
        db = self.db
        caller, key, path = command.caller, command.key, command.path
        lock = (advisory_lock_key(caller, key),)
        if db.postgresql and not db.run(_LOCK_KEY, lock).fetchone()[0]:
            raise Refusal(409)  # the key is in flight in another process
        earlier = db.run(_RECORD, (caller, key)).fetchone()
        if earlier is not None:  # nothing written: committing it keeps nothing
            if earlier[0] != command.request_hash:
                raise Refusal(422)
            return int(earlier[1]), str(earlier[2]).encode()
        if path == "/v1/hands":
            status, answer = 201, self._place(command.player_id, command.token_id, command.body)
        elif path.startswith("/v1/hands/") and path.endswith("/decision"):
            hand_id = int(path[len("/v1/hands/") : -len("/decision")])
            answer = self._decide(command.player_id, command.token_id, hand_id, command.body)
            status = 200
        else:
            raise Refusal(404)
        encoded = msgspec.json.encode(answer)
        now = db.time(datetime.now(UTC))
        db.run(_INSERT_RECORD, (caller, key, command.request_hash, status, encoded.decode(), now))
        return status, encoded

    def _place(self, player_id: int, token_id: int, body: dict[str, Any]) -> dict[str, Any]:
        db = self.db
        table_id, bet = int(body["table_id"]), int(body["bet"])
        tie_bet = int(body.get("tie_bet", 0))
        if db.run(_PLAYER, (player_id,)).fetchone()[0]:
            raise Refusal(501)  # protected players' checks are not prototyped
        table = self._table(table_id)
        if table is None:
            raise Refusal(404)
        books = self._books_of(player_id, table.rules.currency)
        opening = db.run(_OPENING, (player_id, table_id, books.wallet, player_id)).fetchone()
        pair_id, nonce, wallet = opening[0], opening[3], opening[6]
        hand = _dealt(table, opening, bet, tie_bet)
        created_at = datetime.now(UTC)
        settled = _settled(hand, wallet - hand.total_staked)
        settled_at = None if settled[4] is None else db.time(settled[4])
        hand_id = db.run(
            _INSERT_HAND,
            (
                player_id, table_id, pair_id, nonce, books.currency, table.stored,
                hand.status.value, bet, tie_bet, hand.player_card, hand.dealer_card,
                settled[0], hand.total_staked, settled[1], settled[2], wallet, settled[3],
                db.time(created_at), settled_at, ENGINE_VERSION, table.hashed, token_id,
            ),
        ).fetchone()[0]  # fmt: skip
        db.run(_ADVANCE_NONCE, (pair_id,))
        self._post(books, hand_id, player_id, table_id, token_id, _placed(books, hand), created_at)
        return _answer(hand_id, hand, settled[3])

    def _place_combined(self, command: Command) -> tuple[int, bytes]:
        """`_place` and its key's record on PostgreSQL in six round trips: the same checks,
        locks and rows, the statements combined."""
        db = self.db
        try:
            locked, protected = db.run(
                _LOCKS, (advisory_lock_key(command.caller, command.key), command.player_id)
            ).fetchone()
            if not locked:
                raise Refusal(409)
            if protected:
                raise Refusal(501)
            written = self._written(command, lambda read: db.run(_READ_ALL, read).fetchone())
            if isinstance(written, tuple):  # the key was used before: its answer again
                db.rollback()
                return written
            moved, advanced = db.run(written.statement, written.parameters).fetchone()
            if moved < written.moves:
                raise Refusal(422)  # a limit: the rollback takes every move back
            if advanced != 1:
                raise Refusal(409)  # the nonce moved under the player's lock: never expected
            db.run(_MOVE_HEAD, (*written.head, written.chain))
            db.commit()
        except BaseException:
            db.rollback()
            raise
        return 201, written.answer

    def _place_exchanged(self, exchanges: Exchanges, command: Command) -> tuple[int, bytes]:
        """`_place_combined` in two round trips (`--exchanged`): the same locks and rows. The
        table and the player's accounts, remembered after a first hand, are checked before
        the key's lock rather than after it; a nonce that did not move on (never, under the
        player's lock) is answered 422 with a limit, for both fail the write alike."""
        lock = _statement(
            _LOCKS_OR_FAIL, (advisory_lock_key(command.caller, command.key), command.player_id)
        )

        def locked_read(parameters: Sequence[object]) -> Sequence[Any] | None:
            try:
                rows = exchanges.run([lock, _statement(_READ_LOCKED, parameters)])
            except psycopg_errors.DivisionByZero:
                raise Refusal(409) from None  # the key is in flight in another process
            return rows[0] if rows else None

        try:
            written = self._written(command, locked_read)
            if isinstance(written, tuple):  # the key was used before: its answer again
                self.db.rollback()
                return written
            writes = _statement(_all_moved(written.statement), [*written.parameters, written.moves])
            head = _statement(_spelled(_MOVE_HEAD, True), (*written.head, written.chain))
            try:
                exchanges.run([writes, head], commit=True)
            except psycopg_errors.DivisionByZero:
                raise Refusal(422) from None  # a limit: the rollback takes every move back
        except BaseException:
            self.db.rollback()
            raise
        return 201, written.answer

    def _place_optimistic(self, command: Command) -> tuple[int, bytes]:
        """`_place` and its key's record on PostgreSQL in two statements and no lock
        (`--optimistic`): one read, then every write in one implicit transaction whose
        statements check that what the read saw still holds (the seed pair's nonce, the
        wallet's balance, the chain's head) and fail it otherwise; the hand is then dealt
        again from a new read. A key used twice at once fails the second writer on the key's
        unique index, whose retry replays the first's answer. A limit fails it the same way,
        so a hand a limit refuses is answered 503 after the last attempt, not 422: the
        prototype prices the hand that is placed."""
        for _ in range(_OPTIMISTIC_ATTEMPTS):
            written = self._written(
                command, lambda read: self.db.run(_READ_OPTIMISTIC, read).fetchone()
            )
            if isinstance(written, tuple):
                return written
            head_checks = (*written.head, written.chain, written.head_read)
            checks = (written.moves, *written.wallet, *head_checks)
            try:
                self.db.run_together(_optimistic(written.statement), [*written.parameters, *checks])
            except (psycopg_errors.DivisionByZero, psycopg_errors.UniqueViolation):
                continue  # something the read saw changed: read again
            return 201, written.answer
        raise Refusal(503)

    def _written(
        self, command: Command, read_all: Callable[[Sequence[object]], Any]
    ) -> "Writes | tuple[int, bytes]":
        """A placed hand's writes but the chain head's, worked out from one read of
        everything (`read_all`, given the read's parameters: its row, or None); or the key's
        earlier answer, if it has one."""
        player_id, token_id, body = command.player_id, command.token_id, command.body
        table_id, bet = int(body["table_id"]), int(body["bet"])
        tie_bet = int(body.get("tie_bet", 0))
        table = self._table(table_id)
        if table is None:
            raise Refusal(404)
        books = self._books_of(player_id, table.rules.currency)
        read = read_all(
            (player_id, table_id, books.wallet, books.chain, command.caller, command.key, player_id)
        )
        if read is None:
            raise Refusal(409)  # no active seed pair
        if read[0] is not None:  # the key was used before: its answer again
            if read[0] != command.request_hash:
                raise Refusal(422)
            return int(read[1]), str(read[2]).encode()
        if any(read[15:]):  # a protected player (read by `--optimistic`, `--exchanged`)
            raise Refusal(501)
        pair_id, nonce, wallet = read[3], read[6], read[9]
        head, (hand_id, *transaction_ids) = read[10:12], read[12:15]
        hand = _dealt(table, read[3:10], bet, tie_bet)
        created_at = datetime.now(UTC)
        settled = _settled(hand, wallet - hand.total_staked)
        batch = _batch(books, hand_id, player_id, table_id, token_id, _placed(books, hand))
        rows, last = _linked(books, batch, head, created_at, created_at)
        ids = sorted(transaction_ids)[: len(rows)]
        answer = msgspec.json.encode(_answer(hand_id, hand, settled[3]))
        hand_row = (
            hand_id, player_id, table_id, pair_id, nonce, books.currency, table.stored,
            hand.status.value, bet, tie_bet, hand.player_card, hand.dealer_card, settled[0],
            hand.total_staked, settled[1], settled[2], wallet, settled[3], created_at,
            settled[4], ENGINE_VERSION, table.hashed, token_id,
        )  # fmt: skip
        record = (command.caller, command.key, command.request_hash, 201, answer.decode())
        entries = _entry_rows(books, batch, ids)
        moved = batch.moved
        wallet_id = books.rows[books.wallet][0]
        wallet_delta = next(delta for account, delta, _, _ in moved if account == wallet_id)
        parameters = [
            *hand_row,
            pair_id,
            nonce,
            *_move_parameters(moved),
            *_flat([(transaction_id, *row) for transaction_id, row in zip(ids, rows, strict=True)]),
            *_flat(entries),
            *record,
            datetime.now(UTC),
        ]
        return Writes(
            _write_all(len(rows), len(entries), len(moved)),
            parameters,
            len(moved),
            (wallet_id, wallet + wallet_delta),
            books.chain,
            head[0],
            last,
            answer,
        )

    def _decide(
        self, player_id: int, token_id: int, hand_id: int, body: dict[str, Any]
    ) -> dict[str, Any]:
        db = self.db
        action = Action(body["action"])
        db.run(_PLAYER, (player_id,)).fetchone()
        row = db.run(_DECIDING, (hand_id,)).fetchone()
        if row is None or row[0] != player_id:
            raise Refusal(404)
        _, table_id, nonce, currency, rules_text, bet, tie_bet, recorded = row[:8]
        rules = self._rules_recorded(rules_text)
        seeds = HandSeeds(row[8], row[9], nonce)
        earlier = Action(recorded) if recorded is not None else None
        hand = decide(play(rules.game, seeds, bet, tie_bet, earlier), action)
        books = self._books_of(player_id, currency)
        wallet = db.run(_BALANCE, (books.rows[books.wallet][0],)).fetchone()[0]
        if wallet < hand.raise_amount:
            raise Refusal(422)
        settled = _settled(hand, wallet - hand.raise_amount)
        decision = {"decided_by": "player", "decision": action.value}
        steps: list[Step] = [("settlement", _settlement(books, hand), decision)]
        if action is Action.WAR:
            steps.insert(0, ("raise", [(books.wallet, books.held, hand.raise_amount)], {}))
        posted_at = settled[4]
        self._post(books, hand_id, player_id, table_id, token_id, steps, posted_at)
        war = hand.war
        db.run(
            _SETTLE_HAND,
            (
                action.value, token_id, hand.raise_amount, hand.total_staked,
                json_text(list(war.burned)) if war else None,
                war.player_card if war else None, war.dealer_card if war else None,
                hand.status.value, settled[0], settled[1], settled[2], settled[3],
                db.time(posted_at), hand_id,
            ),
        )  # fmt: skip
        return _answer(hand_id, hand, settled[3])

    def _post(
        self,
        books: Books,
        hand_id: int,
        player_id: int,
        table_id: int,
        token_id: int,
        steps: Sequence[Step],
        posted_at: datetime,
    ) -> None:
        """The hand's steps as the next links of the player's chain, in `ledger.fresh`'s five
        statements; the hashes and fingerprints are the ledger's own functions."""
        db = self.db
        batch = _batch(books, hand_id, player_id, table_id, token_id, steps)
        moved = batch.moved
        if len(db.run(_move_balances(len(moved)), _move_parameters(moved)).fetchall()) < len(moved):
            raise Refusal(422)  # a limit: the rollback takes every move back
        head = db.run(_LOCK_HEAD, (books.chain,)).fetchone()
        rows, last = _linked(books, batch, head, posted_at, db.time(posted_at))
        ids = [row[0] for row in db.run(_insert_transactions(len(rows)), _flat(rows))]
        ids.sort()  # ascending with seq: both grow with each row inserted
        db.run(_insert_entries(len(batch.entries)), _flat(_entry_rows(books, batch, ids)))
        db.run(_MOVE_HEAD, (*last, books.chain))

    def _table(self, table_id: int) -> Table | None:
        if table_id not in self._tables:
            row = self.db.run(_RULES, (table_id,)).fetchone()
            rules = None if row is None else TableRules.from_dict(json.loads(row[0]))
            stored = None if rules is None else json_text(rules.as_dict())
            self._tables[table_id] = (
                None if rules is None or stored is None else Table(rules, stored, rules_hash(rules))
            )
        return self._tables[table_id]

    def _rules_recorded(self, text: str) -> TableRules:
        rules = self._recorded_rules.get(text)
        if rules is None:
            rules = self._recorded_rules[text] = TableRules.from_dict(json.loads(text))
        return rules

    def _books_of(self, player_id: int, currency: str) -> Books:
        books = self._books.get((player_id, currency))
        if books is None:
            accounts = HandAccounts.of(player_id, currency)
            codes = [spec.code for spec in accounts.specs()]
            found = self.db.run(_ACCOUNTS, codes).fetchall()
            rows = {code: (account_id, side, limit) for code, account_id, side, limit in found}
            if len(rows) < len(codes):
                raise Refusal(501)  # opening accounts is not prototyped: `prepared` opens them
            wallet, held, house = codes
            books = Books(accounts.chain, currency, wallet, held, house, rows)
            self._books[(player_id, currency)] = books
        return books


@dataclass(frozen=True, slots=True)
class Batch:
    """A hand's steps worked out before the database is written: each transaction's kind,
    signed legs and metadata, and each account's move (id, delta, lowest, highest)."""

    reference: str
    transactions: list[tuple[str, list[tuple[str, int]], dict[str, Any]]]
    moved: list[tuple[int, int, int, int]]
    entries: list[tuple[int, str, int]]  # (transaction index, account code, amount)


def _batch(
    books: Books, hand_id: int, player_id: int, table_id: int, token_id: int, steps: Sequence[Step]
) -> Batch:
    rows = books.rows
    moves: dict[str, list[int]] = {}  # code -> [running, lowest, highest]
    transactions: list[tuple[str, list[tuple[str, int]], dict[str, Any]]] = []
    for kind, transfers, extra in steps:
        legs: list[tuple[str, int]] = []
        for debit, credit, amount in transfers:
            if amount > 0:
                legs += ((debit, amount), (credit, -amount))
        running: dict[str, int] = {code: moves[code][0] if code in moves else 0 for code, _ in legs}
        for code, amount in legs:
            running[code] += amount if rows[code][1] == "debit" else -amount
        for code, total in running.items():  # as `ledger.batch.balance_moves` keeps them
            lowest, highest = moves[code][1:] if code in moves else (total, total)
            moves[code] = [total, min(lowest, total), max(highest, total)]
        metadata = {"actor_token_id": token_id, "player_id": player_id, "table_id": table_id}
        transactions.append((kind, legs, dict(sorted((metadata | extra).items()))))
    moved = sorted(
        (rows[code][0], running, lowest, highest)
        for code, (running, lowest, highest) in moves.items()
        if running or lowest < 0
    )
    entries = [
        (index, code, amount)
        for index, (_, legs, _) in enumerate(transactions)
        for code, amount in legs
    ]
    return Batch(reference(hand_id), transactions, moved, entries)


def _linked(
    books: Books, batch: Batch, head: tuple[int, str], posted_at: datetime, stored_at: object
) -> tuple[list[tuple[object, ...]], tuple[int, str]]:
    """The batch's rows for `ledger_transactions` after the chain's `head` (seq, hash), and
    the chain's new head."""
    seq, prev_hash = head
    rows: list[tuple[object, ...]] = []
    for kind, legs, metadata in batch.transactions:
        seq = next_seq(books.chain, seq)
        key = f"{batch.reference}:{kind}"
        digest = transaction_hash(
            seq=seq,
            kind=kind,
            reference=batch.reference,
            idempotency_key=key,
            metadata=metadata,
            posted_at=posted_at,
            entries=((code, books.currency, amount) for code, amount in legs),
            prev_hash=prev_hash,
        )
        fingerprinted = request_fingerprint(
            kind=kind, reference=batch.reference, metadata=metadata, legs=legs
        )
        row = (seq, books.chain, kind, batch.reference, key, fingerprinted)
        rows.append((*row, json_text(metadata), stored_at, prev_hash, digest))
        prev_hash = digest
    return rows, (seq, prev_hash)


def _entry_rows(books: Books, batch: Batch, ids: Sequence[int]) -> list[tuple[object, ...]]:
    """`ledger_entries` rows: each leg under its transaction's id."""
    return [
        (ids[index], books.rows[code][0], books.currency, amount)
        for index, code, amount in batch.entries
    ]


def _flat(rows: Sequence[tuple[object, ...]]) -> list[object]:
    return [value for row in rows for value in row]


def _settled(hand: Hand, wallet_before_settlement: int) -> tuple[Any, Any, Any, Any, Any]:
    """outcome, total_returned, net, balance_after and settled_at: None while the hand waits."""
    if hand.total_returned is None or hand.outcome is None:
        return None, None, None, None, None
    balance_after = wallet_before_settlement + hand.total_returned
    if balance_after > INT64_MAX:
        raise Refusal(422)
    return hand.outcome.value, hand.total_returned, hand.net, balance_after, datetime.now(UTC)


def _answer(hand_id: int, hand: Hand, balance_after: int | None) -> dict[str, Any]:
    return {
        "id": hand_id,
        "status": hand.status.value,
        "net": hand.net,
        "balance_after": balance_after,
    }


def _dealt(table: Table, opening: Sequence[Any], bet: int, tie_bet: int) -> Hand:
    """The hand dealt from `opening` (the pair's id, server seed, client seed and nonce, the
    unfinished hand, whether the table is open, the wallet), once nothing refuses it."""
    _, server_seed, client_seed, nonce, unfinished, table_open, wallet = opening
    if unfinished is not None or not table_open:
        raise Refusal(409)
    table.rules.check_wager(bet, tie_bet)
    hand = deal(table.rules.game, HandSeeds(server_seed, client_seed, nonce), bet, tie_bet)
    if wallet < hand.total_staked:
        raise Refusal(422)
    return hand


def _placed(books: Books, hand: Hand) -> list[Step]:
    """A dealt hand's steps: its stake, and its settlement when the deal settled it."""
    steps: list[Step] = [("stake", [(books.wallet, books.held, hand.bet + hand.tie_bet)], {})]
    if hand.status is HandStatus.SETTLED:
        steps.append(("settlement", _settlement(books, hand), {}))
    return steps


def _settlement(books: Books, hand: Hand) -> list[Transfer]:
    assert hand.total_returned is not None
    return [
        (books.held, books.house, hand.total_staked),
        (books.house, books.wallet, hand.total_returned),
    ]


Outcome = tuple[int, bytes] | Exception


class GroupCommit:
    """SQLite's group commit (`--grouped`): the commands that arrive together, in one
    transaction and one COMMIT.

    A group closes at the end of the event loop's current pass (`call_soon`): the commands
    that reach it by then run one after another in one transaction, as they would have run
    one transaction each, and each is answered only once that transaction has committed. A
    hand shares its COMMIT, and whatever pages its hands have in common (the chain's head,
    the house's account, the indexes' inner pages), with the others of its group. If any
    command of a group is refused, the group is rolled back and each of its commands runs
    again in a transaction of its own: a refusal leaves nothing, and the others' answers are
    what they would have been alone."""

    def __init__(self, hands: "BareHands") -> None:
        self._hands = hands
        self._waiting: list[tuple[Command, asyncio.Future[tuple[int, bytes]]]] = []
        self.sizes: collections.Counter[int] = collections.Counter()
        """How many groups of each size were committed: what grouping found to group."""

    async def run(self, command: Command) -> tuple[int, bytes]:
        loop = asyncio.get_running_loop()
        future: asyncio.Future[tuple[int, bytes]] = loop.create_future()
        self._waiting.append((command, future))
        if len(self._waiting) == 1:
            loop.call_soon(self._flush)
        return await future

    def _flush(self) -> None:
        waiting, self._waiting = self._waiting, []
        self.sizes[len(waiting)] += 1
        try:
            outcomes = self.together([command for command, _ in waiting])
        except Exception as error:  # a rollback that failed: no request may wait for ever
            outcomes = [error] * len(waiting)
        for (_, future), outcome in zip(waiting, outcomes, strict=True):
            if isinstance(outcome, Exception):
                future.set_exception(outcome)
            else:
                future.set_result(outcome)

    def together(self, commands: Sequence[Command]) -> list[Outcome]:
        """`commands` in one transaction, or each in its own if any is refused; what each
        answered, or the exception it raised."""
        hands, db = self._hands, self._hands.db
        try:
            db.begin()
            outcomes: list[Outcome] = [hands.apply(command) for command in commands]
            db.commit()
        except Exception:
            db.rollback()
            outcomes = [_outcome(hands, command) for command in commands]
        return outcomes


def _outcome(hands: "BareHands", command: Command) -> Outcome:
    try:
        return hands.run(command)
    except Exception as error:  # answered to its own request
        return error


async def app(scope: Scope, receive: Receive, send: Send) -> None:
    """The ASGI callable uvicorn serves: `/ready`, and the two commands."""
    if scope["type"] == "lifespan":  # type: ignore[comparison-overlap]  # not in Litestar's types
        await _lifespan(receive, send)
        return
    if scope["type"] != ScopeType.HTTP:
        return
    body = await read_body(receive)
    status, answer = (200 if scope["path"] == "/ready" else 404), b"{}"
    if scope.get("method") == "POST":
        headers = dict(scope["headers"])
        try:
            token = headers.get(b"authorization", b"").decode().removeprefix("Bearer ")
            key = headers[b"idempotency-key"].decode()
            hands = _hands()
            command = hands.command(token, key, scope["path"], msgspec.json.decode(body))
            group = _group()
            status, answer = await group.run(command) if group else hands.run(command)
        except Refusal as refused:
            status = refused.status
        except GameError:  # a wager or a decision the game refuses
            status = 422
        except (KeyError, ValueError, msgspec.DecodeError):
            status = 400
    await lean_hand.answer_with(send, status, answer)


@contextmanager
def serving(
    database_url: str,
    workers: int = 1,
    *,
    combined: bool = False,
    grouped: bool = False,
    optimistic: bool = False,
    exchanged: bool = False,
) -> Iterator[servers.Server]:
    """The prototype served on a database `lean_hand.prepared` set up, until the block ends;
    each worker process has a connection of its own."""
    command = [sys.executable, "-m", "benchmarks.bare_hand", "--workers", str(workers)]
    if combined:
        command.append("--combined")
    if grouped:
        command.append("--grouped")
    if optimistic:
        command.append("--optimistic")
    if exchanged:
        command.append("--exchanged")
    with servers.launched(command, {"CASINO_WAR_DATABASE_URL": database_url}, "/ready") as server:
        server.wait_ready()
        yield server


@functools.cache
def _hands() -> BareHands:
    """The service's engine sets the connection up (SQLite's WAL and pragmas, psycopg for
    PostgreSQL); the prototype then runs on the driver's connection, and begins and commits
    its transactions itself. Only a process that serves the prototype calls it, so psycopg's
    limits are lifted there (`_cache_long_statements`) and never where this module is only
    imported."""
    _cache_long_statements()
    engine = make_engine(os.environ["CASINO_WAR_DATABASE_URL"])
    pooled = engine.raw_connection()
    _KEPT.append(pooled)  # the pool's wrapper, kept so that it never takes the connection back
    optimistic = os.environ.get(_OPTIMISTIC) == "1"
    postgresql = engine.dialect.name == "postgresql"
    db = Bare(pooled.driver_connection, postgresql=postgresql, autocommit=optimistic)
    return BareHands(
        db,
        combined=os.environ.get(_COMBINED) == "1",
        optimistic=optimistic,
        exchanged=os.environ.get(_EXCHANGED) == "1",
    )


@functools.cache
def _group() -> GroupCommit | None:
    """The group commit, where `--grouped` asked for it on SQLite."""
    hands = _hands()
    if os.environ.get(_GROUPED) != "1" or hands.db.postgresql:
        return None
    return GroupCommit(hands)


async def _lifespan(
    receive: Callable[[], Awaitable[Any]], send: Callable[[Any], Awaitable[None]]
) -> None:
    """Nothing to start; on shutdown, the groups' sizes (`--grouped`) go to the server's log,
    `{size: groups}`."""
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            group = _group() if _group.cache_info().currsize else None
            if group is not None:
                print(f"groups by size: {dict(sorted(group.sizes.items()))}", file=sys.stderr)
            await send({"type": "lifespan.shutdown.complete"})
            return


def _cache_long_statements() -> None:
    """psycopg remembers how it converted a statement's placeholders (a regular expression
    run in Python) only for statements of at most 50 parameters and 4,096 bytes
    (`psycopg._queries`); the combined writes (`_write_all`) have about a hundred, and it
    would convert them again on every execution, 14-19% of the prototype's CPU a hand
    (docs/performance-log.md, "psycopg converts a statement of more than 50 parameters on
    every run"). Their shapes are few, so this process caches them too. The
    service's statements are all under those limits."""
    psycopg_queries.MAX_CACHED_STATEMENT_PARAMS = 1_000
    psycopg_queries.MAX_CACHED_STATEMENT_LENGTH = 65_536


_KEPT: list[object] = []
# how the options reach each worker process
_COMBINED = "BARE_HAND_COMBINED"
_GROUPED = "BARE_HAND_GROUPED"
_OPTIMISTIC = "BARE_HAND_OPTIMISTIC"
_EXCHANGED = "BARE_HAND_EXCHANGED"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8003)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument(
        "--combined", action="store_true", help="PostgreSQL: place a hand in six round trips"
    )
    parser.add_argument(
        "--grouped", action="store_true", help="SQLite: commit the hands that arrive together once"
    )
    parser.add_argument(
        "--optimistic",
        action="store_true",
        help="PostgreSQL: place a hand in two statements, without locks",
    )
    parser.add_argument(
        "--exchanged",
        action="store_true",
        help="PostgreSQL: place a hand with --combined's locks in two round trips",
    )
    args = parser.parse_args()
    if args.combined:
        os.environ[_COMBINED] = "1"
    if args.grouped:
        os.environ[_GROUPED] = "1"
    if args.optimistic:
        os.environ[_OPTIMISTIC] = "1"
    if args.exchanged:
        os.environ[_EXCHANGED] = "1"
    serve("benchmarks.bare_hand:app", host=args.host, port=args.port, workers=args.workers)


if __name__ == "__main__":
    main()
