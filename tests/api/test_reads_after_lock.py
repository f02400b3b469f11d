"""A player's command reads what it checks in the statement that locks the player's row
(PostgreSQL, migration `0011_opening_reads_after_lock`). That statement may begin before
the row's previous holder commits; the command still sees what it committed, for the read
is a function that takes a snapshot of its own once the row is held. A read as of the
statement's start would see the player as they were before the holder's command."""

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
from litestar import Litestar
from litestar.testing import TestClient
from sqlalchemy import text

from api.db.database import Database
from api.domain.cashier import service as cashier
from api.http.idempotency import REPLAYED_HEADER
from tests.api.conftest import Caller, new_player, play_until, standard_table_id
from tests.locks import until_a_backend_waits_for_a_lock

pytestmark = pytest.mark.parametrize("database_url", ["postgresql"], indirect=True)


def test_a_hand_deals_from_the_nonce_its_players_last_command_committed_while_it_waited(
    client: TestClient[Litestar], operator: Caller
) -> None:
    """A transaction holds the player's row and moves the seed pair's nonce on, as a hand
    does, while the next hand waits for the row: that hand deals from the nonce committed,
    not from the one before, whose cards were already dealt."""
    database: Database = client.app.state.database
    player, player_id = new_player(operator, deposit=10_000)
    table_id = standard_table_id(player)
    next_nonce = play_until(player, table_id, "settled")["fairness"]["nonce"] + 1
    with ThreadPoolExecutor(max_workers=1) as pool, database.engine.connect() as holder:
        holder.execute(_LOCK_PLAYER_ROW, {"player_id": player_id})
        waiting = pool.submit(player.post, "/v1/hands", {"table_id": table_id, "bet": 100})
        until_a_backend_waits_for_a_lock(database.engine, "the hand")
        holder.execute(_NONCE_MOVED_ON, {"player_id": player_id})
        holder.commit()
        dealt = waiting.result(timeout=10)
    assert dealt.status_code == 201, dealt.text
    assert dealt.json()["fairness"]["nonce"] == next_nonce + 1


def test_a_withdrawal_covered_by_a_deposit_committed_while_it_waited_is_paid(
    client: TestClient[Litestar], operator: Caller
) -> None:
    """A deposit holds the player's row while a withdrawal that only the deposit covers
    waits for it: once the deposit commits, the withdrawal is paid from the balance with
    the deposit in it."""
    database: Database = client.app.state.database
    _, player_id = new_player(operator, deposit=100)
    held, release = threading.Event(), threading.Event()
    withdrawal = {"player_id": player_id, "amount": 300, "currency": "USD"}
    with ThreadPoolExecutor(max_workers=2) as pool:
        depositing = pool.submit(_deposit_and_hold, database, player_id, held, release)
        try:
            assert held.wait(timeout=10)
            waiting = pool.submit(operator.post, "/v1/cashier/withdrawals", withdrawal)
            until_a_backend_waits_for_a_lock(database.engine, "the withdrawal")
        finally:
            release.set()
        depositing.result(timeout=10)
        paid = waiting.result(timeout=10)
    assert paid.status_code == 201, paid.text
    assert paid.json()["balance_after"] == 100 + 500 - 300


def test_a_replayed_hand_runs_no_read_and_draws_no_hand_id(operator: Caller) -> None:
    """The read runs only for a key without a record: a replay answers from the record, and
    the next hand takes the id after the replayed one's."""
    player, _ = new_player(operator, deposit=10_000)
    placing = {"table_id": standard_table_id(player), "bet": 100}
    first = player.post("/v1/hands", placing, key="placed-once")
    replayed = player.post("/v1/hands", placing, key="placed-once")
    assert first.status_code == 201, first.text
    assert replayed.headers[REPLAYED_HEADER] == "true"
    assert replayed.json()["id"] == first.json()["id"]
    if first.json()["status"] == "awaiting_decision":
        player.post(f"/v1/hands/{first.json()['id']}/decision", {"action": "surrender"})
    after = player.post("/v1/hands", placing)
    assert after.json()["id"] == first.json()["id"] + 1


def _deposit_and_hold(
    database: Database, player_id: int, held: threading.Event, release: threading.Event
) -> None:
    with database.transaction() as session:
        cashier.deposit(session, player_id, 500, "USD", "USD")
        held.set()
        release.wait(timeout=10)


_LOCK_PLAYER_ROW = text("SELECT 1 FROM players WHERE id = :player_id FOR UPDATE")
_NONCE_MOVED_ON = text(
    "UPDATE seed_pairs SET next_nonce = next_nonce + 1 "
    "WHERE player_id = :player_id AND revealed_at IS NULL"
)
