"""A hand's ledger locks, taken in the statement that locks its player (PostgreSQL,
migration `0014_opening_locks_the_chain`): the chain's head, shared by every player on the
chain, is not locked for a hand that the statement's own answer, or a check that needs
nothing read, already refuses, nor for a protected player's hand, whose checks query its
history. (A refusal decided from the balance the locks read, a withdrawal's or a war's,
holds them until its rollback, as an accepted command holds them until its COMMIT.)"""

from typing import Any

import pytest
from litestar import Litestar
from litestar.testing import TestClient
from sqlalchemy import text

from api.db.database import Database
from benchmarks.profile_hand import count_driver_statements
from tests.api.conftest import Caller, new_player, play_until, standard_table_id

pytestmark = pytest.mark.parametrize("database_url", ["postgresql"], indirect=True)


def _last_transaction_id_drawn(client: TestClient[Litestar]) -> int:
    database: Database = client.app.state.database
    with database.engine.connect() as connection:
        drawn = connection.execute(text("SELECT last_value FROM ledger_transactions_id_seq"))
        return int(drawn.scalar_one())


def _refused_drawing_nothing(
    client: TestClient[Litestar], player: Caller, placing: dict[str, Any], code: str
) -> None:
    drawn_before = _last_transaction_id_drawn(client)
    refused = player.post("/v1/hands", placing)
    assert refused.status_code == 422 and refused.json()["code"] == code, refused.text
    assert _last_transaction_id_drawn(client) == drawn_before


def test_a_wager_the_table_refuses_draws_no_ledger_id(
    client: TestClient[Litestar], operator: Caller
) -> None:
    player, _ = new_player(operator, deposit=10_000)
    table_id = standard_table_id(player)
    play_until(player, table_id, "settled")  # the player's accounts open
    _refused_drawing_nothing(
        client, player, {"table_id": table_id, "bet": 100_001}, "bet_out_of_range"
    )


def test_a_stake_the_wallet_does_not_cover_draws_no_ledger_id(
    client: TestClient[Litestar], operator: Caller
) -> None:
    player, _ = new_player(operator, deposit=300)
    table_id = standard_table_id(player)
    play_until(player, table_id, "settled")
    placing = {"table_id": table_id, "bet": 500}
    _refused_drawing_nothing(client, player, placing, "insufficient_funds")


def test_a_protected_players_hand_reads_after_the_lock_statement(
    client: TestClient[Litestar], operator: Caller
) -> None:
    """Its checks query the player's history: the opening is read by a statement of its own,
    without the ledger's locks, which the hand takes as it posts, after the checks."""
    database: Database = client.app.state.database
    sent: list[str] = []
    count_driver_statements(database.engine, sent.append)
    database.engine.dispose()  # the connections opened from now on count
    player, _ = new_player(operator, deposit=10_000)
    limits = {"limits": [{"kind": "loss", "period": "day", "amount": 5_000}]}
    assert player.post("/v1/me/limits", limits).status_code == 200
    table_id = standard_table_id(player)
    sent.clear()
    placed = player.post("/v1/hands", {"table_id": table_id, "bet": 100})
    assert placed.status_code == 201, placed.text
    assert any(" ".join(s.split()).startswith("SELECT hand_opening_after_lock(") for s in sent), (
        sent
    )
