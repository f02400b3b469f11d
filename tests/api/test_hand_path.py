"""The hand path's cost: it does not grow with a player's history, and a hand sends each
database as few statements as its writes allow."""

import contextlib
import re
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import psycopg
import pytest
from litestar import Litestar
from litestar.testing import TestClient
from sqlalchemy import Engine, create_engine, event, text

from api.db.database import Database
from api.domain.hands import service as hands
from api.domain.hands import store
from api.domain.hands.unfinished import ResolvedHand, resolve_overdue
from api.domain.tables.service import ensure_standard_table, set_open
from benchmarks.profile_hand import count_driver_statements
from casino.hand import Action
from ledger.chains import chain_for
from ledger.driver import watch_exchanges
from tests.api.conftest import Caller, play_until, standard_table_id
from tests.api.conftest import new_player as new_player_over_http
from tests.audit.support import new_player, standard_table
from tests.locks import until_a_backend_waits_for_a_lock


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
def test_the_unfinished_hand_look_up_uses_the_partial_index_not_the_history(
    database_url: str,
) -> None:
    engine = create_engine(database_url)
    with engine.connect() as connection:
        plan = connection.exec_driver_sql(
            f"EXPLAIN QUERY PLAN {store.OPENING.sqlite}",
            {"player_id": 1, "table_id": 1, "wallet": "wallet:1:USD"},
        ).all()
    engine.dispose()
    details = " ".join(str(row[-1]) for row in plan)
    assert "uq_hands_one_unfinished_per_player" in details


def test_a_settled_hand_takes_nine_statements_on_sqlite_and_five_on_postgresql(
    database_url: str,
) -> None:
    """The player's lock; the one read; the hand's row and its nonce; the balances; the
    chain's head; the transactions and their entries; the head moved on. On PostgreSQL the
    hand's row and its nonce are CTEs (`Driver.alongside`) of one statement that moves the
    balances and locks the head, and the transactions and entries are one statement. BEGIN,
    COMMIT and the pool's ping are not counted."""
    statements = _statements_of(_noted_for_a_settled_hand(database_url, count_driver_statements))
    assert len(statements) == (5 if database_url.startswith("postgresql") else 9), statements


@pytest.mark.parametrize("database_url", ["postgresql"], indirect=True)
def test_a_settled_hand_waits_on_postgresql_four_times_its_begin_included(
    database_url: str,
) -> None:
    """The BEGIN and the player's lock; the one read; the hand's row with the balances and
    the chain's head; the postings, the head moved on and COMMIT. A write whose answer
    nobody reads goes with the statement after it (`ledger.driver`), the BEGIN with the
    transaction's first (`ledger.pq_exchange`)."""
    waits = _noted_for_a_settled_hand(database_url, _count_round_trips)
    assert len([w for w in waits if not _PING.match(w)]) == 4, waits


@pytest.mark.parametrize("database_url", ["postgresql"], indirect=True)
def test_a_hand_does_not_wait_for_a_table_being_opened_or_closed_on_postgresql(
    database_url: str,
) -> None:
    """Closing a table holds its row and then takes the events' head; the back office's
    resolution of abandoned hands holds the events' head while it takes players' rows; a
    hand holds its player's row and its chain's head before its row's foreign key reaches
    the table. A hand that waited for the table could close that circle."""
    database = Database.connect(database_url)
    held, release = threading.Event(), threading.Event()
    pool = ThreadPoolExecutor(max_workers=2)
    try:
        with database.transaction() as session:
            ensure_standard_table(session, "USD")
        player_id, table_id = new_player(database), standard_table(database)
        for _ in range(2):
            _play_out(database, player_id, table_id)
        pool.submit(_close_and_hold, database, table_id, held, release)
        assert held.wait(timeout=10)
        pool.submit(_play_out, database, player_id, table_id).result(timeout=10)
    finally:
        release.set()  # the closing rolled back: a hand that waited goes on
        pool.shutdown(wait=True)
        database.dispose()


class _RolledBack(Exception):
    """Ends a unit of work the test must not commit."""


def _close_and_hold(
    database: Database, table_id: int, held: threading.Event, release: threading.Event
) -> None:
    with contextlib.suppress(_RolledBack), database.transaction() as session:
        set_open(session, table_id, is_open=False)
        held.set()
        release.wait(timeout=30)
        raise _RolledBack


@pytest.mark.parametrize("database_url", ["postgresql"], indirect=True)
def test_resolving_overdue_hands_locks_their_players_before_any_chains_head_on_postgresql(
    database_url: str,
) -> None:
    """The back office resolves every overdue hand in one transaction, and each settlement
    locks its chain's head until the end; a player it has yet to reach may hold their own
    row meanwhile and wait for one of those heads (a deposit, their own decision)."""
    database = Database.connect(database_url)
    holder, pool = database.engine.connect(), ThreadPoolExecutor(max_workers=1)
    try:
        with database.transaction() as session:
            ensure_standard_table(session, "USD")
        table_id = standard_table(database)
        first, second = new_player(database), new_player(database)
        for player_id in (first, second):
            _tie(database, player_id, table_id)
        holder.begin()
        holder.execute(_LOCK_PLAYER_ROW, {"player_id": second})
        resolving = pool.submit(_resolve_overdue, database)
        until_a_backend_waits_for_a_lock(database.engine, "the resolution")
        with database.engine.connect() as probe:
            probe.execute(_LOCK_HEAD_AT_ONCE, {"chain": chain_for(str(first))})
            probe.rollback()
    finally:
        holder.close()  # the player let go: the resolution goes on, whatever was asserted
        pool.shutdown(wait=True)
        database.dispose()
    assert [hand.resolution for hand in resolving.result(timeout=30)] == ["surrender"] * 2


_LOCK_PLAYER_ROW = text("SELECT 1 FROM players WHERE id = :player_id FOR UPDATE")
_LOCK_HEAD_AT_ONCE = text("SELECT 1 FROM ledger_chain_head WHERE id = :chain FOR UPDATE NOWAIT")


def _tie(database: Database, player_id: int, table_id: int) -> None:
    """Hands until one awaits a decision."""
    while True:
        with database.transaction() as session:
            hand = hands.open_hand(session, player_id, table_id, 100, 0)
        if hand.status != "settled":
            return


def _resolve_overdue(database: Database) -> list[ResolvedHand]:
    with database.transaction() as session:
        return resolve_overdue(session, 0, "surrender", None)


def _noted_for_a_settled_hand(
    database_url: str, watch: Callable[[Engine, Callable[[str], None]], None]
) -> list[str]:
    """What `watch` noted while the service placed a hand that settled at once. Not the
    first two hands: the first reads the table's rules and opens the player's hand
    accounts, the second reads their rows, which every later hand remembers."""
    database = Database.connect(database_url)
    noted: list[str] = []
    watch(database.engine, noted.append)
    try:
        with database.transaction() as session:
            ensure_standard_table(session, "USD")
        player_id = new_player(database)
        table_id = standard_table(database)
        for _ in range(2):
            _play_out(database, player_id, table_id)
        while True:
            noted.clear()
            with database.transaction() as session:
                hand = hands.open_hand(session, player_id, table_id, 100, 0)
            if hand.status == "settled":
                return noted
            _surrender(database, player_id, hand.id)  # a tie: another hand, then
    finally:
        database.dispose()


_PING = re.compile(r"\s*select 1\b", re.IGNORECASE)


def _count_round_trips(engine: Engine, note: Callable[[str], None]) -> None:
    """Note each exchange of the drivers (statements sent together, their answers awaited
    once, a transaction's BEGIN with its first), each statement psycopg sends for
    SQLAlchemy, and each of psycopg's commits, on the connections opened from now on.
    (psycopg's own BEGIN, before a statement of SQLAlchemy's that starts a transaction, is
    not noted: a hand's transactions start with the driver's.)"""
    watch_exchanges(engine, lambda texts: note("<exchange> " + "; ".join(texts)))

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        class Noting(psycopg.Cursor[Any]):
            def execute(self, query: Any, *args: Any, **kwargs: Any) -> Any:
                note(str(query))
                return super().execute(query, *args, **kwargs)

        dbapi_connection.cursor_factory = Noting
        commit = dbapi_connection.commit

        def noted_commit() -> None:
            if dbapi_connection.pgconn.transaction_status != psycopg.pq.TransactionStatus.IDLE:
                note("COMMIT")
            commit()

        dbapi_connection.commit = noted_commit


def _statements_of(sent: list[str]) -> list[str]:
    """The statements of the units of work sent; SQLite traces a statement again at the start
    of each trigger it fires."""
    once = [s for i, s in enumerate(sent) if i == 0 or s != sent[i - 1]]
    return [s for s in once if not _OUTSIDE_THE_UNIT_OF_WORK.match(s)]


_OUTSIDE_THE_UNIT_OF_WORK = re.compile(r"\s*(--|BEGIN|COMMIT|ROLLBACK|;|SELECT 1\b)")
"""What SQLite traces of its triggers' bodies, transaction control and the pool's ping."""


def _play_out(database: Database, player_id: int, table_id: int) -> None:
    with database.transaction() as session:
        hand = hands.open_hand(session, player_id, table_id, 100, 0)
    if hand.status != "settled":
        _surrender(database, player_id, hand.id)


def _surrender(database: Database, player_id: int, hand_id: int) -> None:
    with database.transaction() as session:
        hands.decide_hand(session, hand_id, Action.SURRENDER, player_id=player_id)


def test_a_hand_placed_over_http_locks_the_key_and_the_player_in_one_round_trip_on_postgresql(
    client: TestClient[Litestar], operator: Caller
) -> None:
    """The whole request: the key (on PostgreSQL its advisory lock, the player's row lock,
    the key's record and the hand's opening read with the ledger's locks, in one statement),
    the hand's statements (on PostgreSQL its row, its nonce, the balances and the postings
    in one, the head's move in another), the key's record written (on PostgreSQL a CTE of
    the head's move, `Driver.alongside`)."""
    sent = _noted_for_a_settled_hand_over_http(client, operator, count_driver_statements)
    statements = [" ".join(s.split()) for s in _statements_of(sent)]
    first = statements[0]
    database: Database = client.app.state.database
    if database.is_postgresql:
        assert "pg_try_advisory_xact_lock" in first and "FROM players" in first
        assert "idempotency_record_after_lock" in first
        assert "hand_opening_locking_chain" in first
    else:
        assert first.startswith("SELECT request_hash")
    assert len(statements) == (3 if database.is_postgresql else 11), statements


@pytest.mark.parametrize("database_url", ["postgresql"], indirect=True)
def test_a_hand_placed_over_http_waits_on_postgresql_twice_its_begin_included(
    client: TestClient[Litestar], operator: Caller
) -> None:
    """The BEGIN, the key's and the player's locks with the key's record, the opening read
    and the ledger's locks (the hand's accounts, its chain's head, the ids drawn); then the
    hand, the balances and the postings, the head moved on with the key's record beside it,
    and the COMMIT."""
    waits = _noted_for_a_settled_hand_over_http(client, operator, _count_round_trips)
    assert len([w for w in waits if not _PING.match(w)]) == 2, waits


def _noted_for_a_settled_hand_over_http(
    client: TestClient[Litestar],
    operator: Caller,
    noting: Callable[[Engine, Callable[[str], None]], None],
) -> list[str]:
    """What `noting` notes of a hand placed over HTTP and settled at once, on connections
    opened after it starts noting; the hands before it taught the process the table's rules
    and the player's account rows, which it then remembers."""
    database: Database = client.app.state.database
    noted: list[str] = []
    noting(database.engine, noted.append)
    if database.sqlite_writer is not None:  # its kept connection is not the pool's
        database.sqlite_writer.close()
    database.engine.dispose()  # the connections opened from now on count
    player, _ = new_player_over_http(operator, deposit=10_000)
    table_id = standard_table_id(player)
    for _ in range(2):
        play_until(player, table_id, "settled")
    while True:
        noted.clear()
        hand = player.post("/v1/hands", {"table_id": table_id, "bet": 100}).json()
        if hand["status"] == "settled":
            return noted
        player.post(f"/v1/hands/{hand['id']}/decision", {"action": "surrender"})


@pytest.mark.parametrize("database_url", ["postgresql"], indirect=True)
@pytest.mark.parametrize("move", ["deposits", "withdrawals"])
def test_the_cashier_takes_its_posting_locks_in_the_statement_that_locks_its_player_on_postgresql(
    client: TestClient[Litestar], operator: Caller, move: str
) -> None:
    """A deposit's or a withdrawal's key, its player's row lock, and its posting's locks
    with the wallet's balance (`ledger_posting_locks`) in one statement, then the ledger's
    two, which wait for the COMMIT: the balances with the transaction and its entries, the
    head moved on with the key's record."""
    sent = _noted_for_a_cash_movement(client, operator, move, count_driver_statements)
    statements = [" ".join(s.split()) for s in _statements_of(sent)]
    assert "ledger_posting_locks" in statements[0], statements
    assert len(statements) == 3, statements


@pytest.mark.parametrize("database_url", ["postgresql"], indirect=True)
@pytest.mark.parametrize("move", ["deposits", "withdrawals"])
def test_a_cash_movement_waits_on_postgresql_twice_its_begin_included(
    client: TestClient[Litestar], operator: Caller, move: str
) -> None:
    """The BEGIN with the key's and the player's locks and the posting's locks; then the
    posting, the head's move and the key's record with the COMMIT. A player's first movement
    in a currency, whose accounts are opened as it posts, waits more, and is not counted."""
    waits = _noted_for_a_cash_movement(client, operator, move, _count_round_trips)
    assert len([w for w in waits if not _PING.match(w)]) == 2, waits


def _noted_for_a_cash_movement(
    client: TestClient[Litestar],
    operator: Caller,
    move: str,
    noting: Callable[[Engine, Callable[[str], None]], None],
) -> list[str]:
    """What `noting` notes of a deposit or a withdrawal (`move`) of a player whose accounts
    are open and whose rows the process has read, on connections opened after it starts."""
    database: Database = client.app.state.database
    noted: list[str] = []
    noting(database.engine, noted.append)
    database.engine.dispose()  # the connections opened from now on count
    _, player_id = new_player_over_http(operator, deposit=10_000)  # the accounts opened
    amount = {"player_id": player_id, "amount": 100, "currency": "USD"}
    assert operator.post("/v1/cashier/deposits", amount).status_code == 201  # their rows read
    noted.clear()
    assert operator.post(f"/v1/cashier/{move}", amount).status_code == 201
    return noted


@pytest.mark.parametrize("database_url", ["postgresql"], indirect=True)
def test_a_decision_waits_on_postgresql_four_times_its_begin_included(
    client: TestClient[Litestar], operator: Caller
) -> None:
    """The BEGIN with the key's and the player's locks; the hand and its seeds; the
    posting's locks with the wallet's balance (`ledger.fresh.lock_ahead`), where the balance
    was read and the balances moved with the head's lock, a wait each; then the raise and
    the settlement, the hand's row, the head's move and the key's record with the COMMIT."""
    database: Database = client.app.state.database
    waits: list[str] = []
    _count_round_trips(database.engine, waits.append)
    database.engine.dispose()  # the connections opened from now on count
    player, _ = new_player_over_http(operator, deposit=100_000)
    tie = play_until(player, standard_table_id(player), "awaiting_decision")
    waits.clear()
    decided = player.post(f"/v1/hands/{tie['id']}/decision", {"action": "war"})
    assert decided.status_code == 200, decided.text
    assert len([w for w in waits if not _PING.match(w)]) == 4, waits
