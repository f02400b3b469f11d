"""Filling a database with history for the history point: to the plan's size, by the players
that will play it, through the service functions (no servers here), on both databases (on
PostgreSQL the filled tables are vacuumed too)."""

from dataclasses import replace

from sqlalchemy import select

from api.db.database import Database
from api.db.models import hands_table
from api.domain.cashier import service as cashier
from api.domain.players import service as players
from api.domain.tables import service as tables
from benchmarks.history import fill
from benchmarks.plan import TINY

PLAN = replace(TINY, history_hands=30)


def _database_with_players(url: str, count: int) -> list[int]:
    database = Database.connect(url)
    try:
        with database.transaction() as session:
            tables.ensure_standard_table(session, "USD")
        with database.transaction() as session:
            ids = [players.create_player(session, None, None).id for _ in range(count)]
            for player_id in ids:
                cashier.deposit(session, player_id, PLAN.deposit, "USD", "USD")
        return ids
    finally:
        database.dispose()


def _players_of_hands(url: str) -> list[int]:
    database = Database.connect(url)
    try:
        with database.transaction() as session:
            return list(session.scalars(select(hands_table.c.player_id)))
    finally:
        database.dispose()


def test_the_history_is_filled_to_the_plans_size_by_the_given_players_in_turn(
    database_url: str,
) -> None:
    first, second, _ = _database_with_players(database_url, 3)
    filled = fill(database_url, PLAN, [first, second])
    assert (filled["hands"], filled["hands_before_fill"], filled["filled_hands"]) == (30, 0, 30)
    owners = _players_of_hands(database_url)
    assert sorted(owners) == sorted([first, second] * 15)


def test_hands_already_played_count_towards_the_history(database_url: str) -> None:
    (player,) = _database_with_players(database_url, 1)
    fill(database_url, replace(PLAN, history_hands=10), [player])
    filled = fill(database_url, PLAN, [player])
    assert (filled["hands"], filled["hands_before_fill"], filled["filled_hands"]) == (30, 10, 20)
