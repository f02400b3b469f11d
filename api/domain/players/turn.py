"""A player's actions, one at a time.

Every unit of work that moves a player's money or changes their game first locks the
player's row, so that a player's requests serialise (on SQLite, BEGIN IMMEDIATE already
serialises every writer). The lock order everywhere is: player row, then the ledger
accounts in id order, then the ledger's chain head; so no two requests can deadlock.
"""

from sqlalchemy import bindparam, literal, select
from sqlalchemy.orm import Session

from api.db.models import HandRecord
from api.errors import Conflict, NotFound
from casino.hand import HandStatus
from ledger.driver import Driver, Sql, driver_of

# Built once, with bound parameters; the status is written into the statement, so that
# SQLite can use the partial index of hands awaiting a decision (with a bound parameter it
# would scan the player's whole history).
_LOCK_PLAYER = Sql.of("SELECT id FROM players WHERE id = :player_id{for_update}")
_UNFINISHED_HAND = select(HandRecord.id).where(
    HandRecord.player_id == bindparam("player_id"),
    HandRecord.status == literal(HandStatus.AWAITING_DECISION.value, literal_execute=True),
)


def lock_player(session: Session, player_id: int) -> None:
    lock_player_on(driver_of(session), player_id)


def lock_player_on(driver: Driver, player_id: int) -> None:
    """Check that the player exists and, on PostgreSQL, lock the row for the rest of the
    transaction. What the unit of work reads next, it reads in later statements: under
    READ COMMITTED those see everything the previous holder of the lock committed."""
    if driver.first(_LOCK_PLAYER, {"player_id": player_id}) is None:
        raise NotFound("player")


def refuse_if_unfinished(session: Session, player_id: int) -> None:
    """One hand at a time: a tie awaiting its decision blocks new hands and seed rotation."""
    refuse_unfinished(session.scalar(_UNFINISHED_HAND, {"player_id": player_id}))


def refuse_unfinished(unfinished_hand: int | None) -> None:
    if unfinished_hand is not None:
        raise Conflict(
            "unfinished_hand", f"hand {unfinished_hand} awaits a decision; decide it first"
        )
