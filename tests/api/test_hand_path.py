"""The hand path's cost does not grow with a player's history."""

import pytest
from sqlalchemy import create_engine

from api.domain.hands import store


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
