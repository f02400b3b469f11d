"""The driver's statements on PostgreSQL, sent by libpq through psycopg's wrapper of it.

psycopg's cursor spends Python on every statement that a fixed set of statements needs
once: it converts the query and looks its preparation up anew each time, keeps a pipeline's
queues of commands and results, and begins each transaction with a round trip of its own.
Here each exchange is one pipeline: the transaction's BEGIN when one must start, every
statement, one sync, one wait. A hand cost its process 0.81 of the instructions it did
through the cursor (docs/performance-log.md, "The driver's own exchanges with PostgreSQL").

Each statement is prepared on its connection once, by its text and its parameters' types
(an integer's type follows its size, as psycopg dumps it), in the pipeline that first runs
it. psycopg prepares nothing of its own on these connections (`prepare_threshold` None,
`ledger.database.make_engine`): after a rollback it drops every statement prepared on the
connection (`DEALLOCATE ALL`), this module's with its own.

The values are dumped and the rows loaded by psycopg's `Transformer`, with the connection's
adapters, as its cursor does; a failed statement raises psycopg's error for it. The waits
are the connection's (`Connection.wait`): a unit of work on the event loop awaits them there
(`api.db.loop_units`).
"""

import itertools
import re
from collections import OrderedDict
from collections.abc import Callable, Generator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import psycopg
from psycopg import errors, pq
from psycopg.adapt import PyFormat, Transformer
from psycopg.pq import ConnStatus, ExecStatus, TransactionStatus
from psycopg.waiting import Ready, Wait

Row = tuple[Any, ...]
Statement = tuple[str, Mapping[str, Any]]
"""A statement's text, its parameters written `%(name)s`, and their values by name."""

_Prepared = tuple[bytes, tuple[int, ...]]
"""What a statement is prepared for: its query, its parameters' types."""

_PLACEHOLDER = re.compile(r"%\((\w+)\)s|%%")
_NAMES = itertools.count(1)
"""The prepared statements' numbers: one sequence for the process, so that no two
`Exchanges` on a connection can give one name to two statements."""
_COMMIT = b"COMMIT"
_NO_SUCH_STATEMENT = b"26000"
_ANSWERED = frozenset({ExecStatus.COMMAND_OK, ExecStatus.TUPLES_OK})
MOST_PREPARED = 256
"""The statements a connection keeps prepared: a hand's and a cash movement's paths prepare
a few dozen (their texts, and their integers' sizes)."""
_CAN_CLOSE = pq.version() >= 170000
"""libpq 17 closes a prepared statement in a pipeline (psycopg's binary package bundles
it); an older one keeps every statement it prepared for the connection's life."""


@lru_cache(maxsize=512)
def numbered(text: str) -> tuple[bytes, tuple[str, ...]]:
    """`text` with its `%(name)s` placeholders numbered `$1`, `$2`... (one number a name,
    in the order of first use) and its `%%` as `%`; and the names in their numbers' order."""
    names: dict[str, int] = {}

    def number(found: re.Match[str]) -> str:
        if found[1] is None:
            return "%"
        return f"${names.setdefault(found[1], len(names) + 1)}"

    return _PLACEHOLDER.sub(number, text).encode(), tuple(names)


Observer = Callable[[list[str]], None]
"""Told the texts of each exchange's statements as it goes (its COMMIT as "COMMIT")."""


@dataclass(slots=True)
class _Sent:
    """What an exchange's results will answer, by their places: the commands sent, the
    statements prepared, the last statement run, the statements closed."""

    commands: int = 0
    preparing: list[tuple[int, _Prepared, bytes]] = field(default_factory=list)
    last_statement: int | None = None
    closing: list[tuple[int, bytes]] = field(default_factory=list)


class Exchanges:
    """One connection's exchanges, and the statements prepared on it so far: at most
    `most_prepared`, the least recently used closed beyond them (psycopg sizes an integer's
    type by its value, so one text can be prepared for several sets of types)."""

    def __init__(
        self,
        connection: psycopg.Connection[Any],
        observer: Observer | None = None,
        most_prepared: int = MOST_PREPARED,
    ) -> None:
        self._connection = connection
        self._observer = observer
        self._pgconn = connection.pgconn
        self._transformer = Transformer(connection)
        self._prepared: OrderedDict[_Prepared, bytes] = OrderedDict()
        self._most_prepared = most_prepared
        self._closing: list[bytes] = []
        """Statements no longer remembered, to close on the server with the next exchange."""
        self._encoding = connection.info.encoding

    def run(self, statements: Sequence[Statement], *, commit: bool = False) -> list[Row]:
        """`statements` in one pipeline, then the COMMIT if `commit`; the last statement's
        rows. A statement that fails raises its error once the pipeline is through; the
        transaction is left failed for the caller to roll back, or, where the connection
        commits each statement or the COMMIT failed, ended. An exchange cut short on a
        connection still open (anything raised before its answers were all read) closes
        the connection: answers still on their way would otherwise be read as the next
        exchange's, and a closed connection is found lost and replaced."""
        if self._observer is not None:
            self._observer([text for text, _ in statements] + (["COMMIT"] if commit else []))
        bound = [self._bound(text, values) for text, values in statements]
        pgconn = self._pgconn
        pgconn.enter_pipeline_mode()
        through = False
        try:
            sent = self._send(bound, commit)
            results = self._connection.wait(_through_sync(pgconn))
            through = True
        finally:
            if pgconn.status == ConnStatus.OK:
                if through:
                    pgconn.exit_pipeline_mode()
                else:
                    pgconn.finish()
        return self._outcome(sent, results)

    def _send(
        self, bound: Sequence[tuple[_Prepared, Sequence[Any], Sequence[int]]], commit: bool
    ) -> _Sent:
        """Everything into the pipeline, and its sync; what each result will answer."""
        pgconn = self._pgconn
        sent = _Sent()
        begin = self._begin_command()
        if begin is not None:
            pgconn.send_query_params(begin, None)
            sent.commands += 1
        named_here: dict[_Prepared, bytes] = {}
        for prepared, values, formats in bound:
            name = self._prepared_name(prepared) or named_here.get(prepared)
            if name is None:
                name = named_here[prepared] = b"casino_war_%d" % next(_NAMES)
                pgconn.send_prepare(name, prepared[0], param_types=prepared[1])
                sent.preparing.append((sent.commands, prepared, name))
                sent.commands += 1
            pgconn.send_query_prepared(name, values, param_formats=formats)
            sent.last_statement = sent.commands
            sent.commands += 1
        if commit:
            pgconn.send_query_params(_COMMIT, None)
            sent.commands += 1
        for name in self._closing:  # after all that counts: a close refuses nothing
            pgconn.send_close_prepared(name)
            sent.closing.append((sent.commands, name))
            sent.commands += 1
        pgconn.pipeline_sync()
        return sent

    def _outcome(self, sent: _Sent, results: list[pq.abc.PGresult]) -> list[Row]:
        """What the prepares and closes did remembered; the first error raised; else the
        last statement's rows."""
        for index, prepared, name in sent.preparing:
            if results[index].status == ExecStatus.COMMAND_OK:
                self._remember(prepared, name)
        if sent.closing:
            closed = {
                name
                for index, name in sent.closing
                if results[index].status == ExecStatus.COMMAND_OK
            }
            self._closing = [name for name in self._closing if name not in closed]
        for result in results:
            if result.status in _ANSWERED:
                continue
            # The commands a failure aborts come after it: the first not answered failed.
            if result.status != ExecStatus.FATAL_ERROR:
                raise errors.OperationalError(f"an exchange was answered {result.status!r}")
            if result.error_field(pq.DiagnosticField.SQLSTATE) == _NO_SUCH_STATEMENT:
                # Something dropped the connection's statements (`DEALLOCATE ALL`): this
                # exchange fails, the next prepares them anew.
                self._prepared.clear()
            raise errors.error_from_result(result, encoding=self._encoding)
        if sent.last_statement is None:
            return []
        last = results[sent.last_statement]
        self._transformer.set_pgresult(last)
        return self._transformer.load_rows(0, last.ntuples, tuple)

    def _prepared_name(self, prepared: _Prepared) -> bytes | None:
        name = self._prepared.get(prepared)
        if name is not None:
            self._prepared.move_to_end(prepared)
        return name

    def _remember(self, prepared: _Prepared, name: bytes) -> None:
        self._prepared[prepared] = name
        while len(self._prepared) > self._most_prepared and _CAN_CLOSE:
            _, oldest = self._prepared.popitem(last=False)
            self._closing.append(oldest)

    def _bound(
        self, text: str, values: Mapping[str, Any]
    ) -> tuple[_Prepared, Sequence[Any], Sequence[int]]:
        """A statement's query and parameter types, its values dumped, and their formats."""
        query, names = numbered(text)
        transformer = self._transformer
        dumped = transformer.dump_sequence(
            [values[name] for name in names], [PyFormat.AUTO] * len(names)
        )
        return (query, tuple(transformer.types or ())), dumped, transformer.formats or ()

    def _begin_command(self) -> bytes | None:
        """The BEGIN psycopg would send before the statement, or None: a transaction is open
        already, or the connection commits every statement on its own."""
        connection = self._connection
        if connection.autocommit or self._pgconn.transaction_status != TransactionStatus.IDLE:
            return None
        return _begin(connection.isolation_level, connection.read_only, connection.deferrable)


@lru_cache(maxsize=32)
def _begin(
    isolation_level: psycopg.IsolationLevel | None, read_only: bool | None, deferrable: bool | None
) -> bytes:
    """psycopg's BEGIN for a connection's transaction settings, spelled as it spells it."""
    parts = [b"BEGIN"]
    if isolation_level is not None:
        level = psycopg.IsolationLevel(isolation_level).name.replace("_", " ")
        parts += [b"ISOLATION LEVEL", level.encode()]
    if read_only is not None:
        parts.append(b"READ ONLY" if read_only else b"READ WRITE")
    if deferrable is not None:
        parts.append(b"DEFERRABLE" if deferrable else b"NOT DEFERRABLE")
    return b" ".join(parts)


def _through_sync(pgconn: pq.abc.PGconn) -> Generator[Wait, Ready | int, list[pq.abc.PGresult]]:
    """A generator of psycopg's kind, which says when it must wait for the socket: what was
    sent flushed, then every result up to the pipeline's sync (one a command: the empty
    results that end each command's are left out)."""
    while pgconn.flush():
        ready = yield Wait.RW
        if ready and ready & Ready.R:
            pgconn.consume_input()
    results: list[pq.abc.PGresult] = []
    ended = False
    while True:
        while pgconn.is_busy():
            yield Wait.R
            pgconn.consume_input()
        result = pgconn.get_result()
        if result is None:
            if ended or pgconn.status != ConnStatus.OK:
                # Two ends in a row, or a connection libpq gave up on: the sync will never
                # come, and waiting for it would spin.
                raise errors.OperationalError("the server's answers stopped before the sync")
            ended = True
            continue
        ended = False
        if result.status == ExecStatus.PIPELINE_SYNC:
            return results
        results.append(result)
