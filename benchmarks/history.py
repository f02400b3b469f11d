"""The history point: what a hand costs once its players have many hands behind them.

After the fresh curves, the service's own database is filled to `plan.history_hands` hands,
spread over the players of the history point, through the service functions in this
process (`benchmarks.audit_bench.HandFactory`: `open_hand`, `decide_hand` going to war on a
tie, 2,000 hands per transaction): the rows and ledger transactions the API writes, without
HTTP, which would take minutes per database. The point is then measured through HTTP as the
fresh one was, at `plan.history_clients` clients, with the same meters: a hand's cost that
grew with the hands before it would show in its CPU per hand.

On PostgreSQL the filled tables are vacuumed and analysed before measuring, as autovacuum
keeps a database that grew over weeks; otherwise autovacuum would run inside the measured
window, on the freshly written rows, and its CPU would be counted as the hands'.
"""

from collections.abc import Mapping, Sequence
from typing import Any

from sqlalchemy import func, select, text

from api.db.database import Database
from api.db.models import hands_table
from benchmarks import http_load
from benchmarks.audit_bench import HandFactory
from benchmarks.cpu import Meter
from benchmarks.plan import Plan
from benchmarks.stats import rate


def _hands(database: Database) -> int:
    with database.transaction() as session:
        return int(session.scalar(select(func.count()).select_from(hands_table)) or 0)


def _vacuum(database: Database) -> None:
    if database.is_postgresql:
        with database.engine.connect() as connection:
            connection.execution_options(isolation_level="AUTOCOMMIT").execute(
                text("VACUUM (ANALYZE)")
            )


def fill(database_url: str, plan: Plan, player_ids: Sequence[int]) -> dict[str, Any]:
    """Play `player_ids` in turn until the database holds `plan.history_hands` hands."""
    database = Database.connect(database_url)
    try:
        before = _hands(database)
        factory = HandFactory(database, plan, player_ids)
        factory.grow_to(max(0, plan.history_hands - before))
        _vacuum(database)
        hands = _hands(database)
    finally:
        database.dispose()
    return {
        "hands": hands,
        "hands_before_fill": before,
        "filled_hands": factory.hands,
        "fill_seconds": round(factory.seconds, 3),
        "fill_hands_per_second": rate(factory.hands, factory.seconds),
    }


def history_section(
    service: http_load.Service,
    database_url: str,
    plan: Plan,
    meters: Mapping[str, Meter] | None = None,
) -> dict[str, Any]:
    """Fill the service's database with history, then measure hands at the history point."""
    players = service.players[: plan.history_clients]
    filled = fill(database_url, plan, [player.player_id for player in players])
    point = http_load.hands_point(service, plan, plan.history_clients, meters)
    return {
        "available": True,
        "reason": None,
        "clients": plan.history_clients,
        **filled,
        "point": point,
    }
