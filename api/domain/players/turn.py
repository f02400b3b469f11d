"""A player's actions, one at a time.

Every unit of work that moves a player's money or changes their game first locks the
player's row, so that a player's requests serialise (on SQLite, BEGIN IMMEDIATE already
serialises every writer). The lock order everywhere is: player row, then the ledger
accounts in id order, then the ledger's chain head; so no two requests can deadlock.
"""

from sqlalchemy import bindparam, literal, select
from sqlalchemy.orm import Session

from api.db.models import HandRecord, Player
from api.errors import Conflict, NotFound
from casino.hand import HandStatus

# Built once, with bound parameters; the status is written into the statement, so that
# SQLite can use the partial index of hands awaiting a decision (with a bound parameter it
# would scan the player's whole history).
_LOCK_PLAYER = select(Player.id).where(Player.id == bindparam("player_id")).with_for_update()
_UNFINISHED_HAND = select(HandRecord.id).where(
    HandRecord.player_id == bindparam("player_id"),
    HandRecord.status == literal(HandStatus.AWAITING_DECISION.value, literal_execute=True),
)


def lock_player(session: Session, player_id: int) -> None:
    """Check that the player exists and, on PostgreSQL, lock the row for the rest of the
    transaction (only the id is read: no caller needs the player loaded)."""
    if session.scalar(_LOCK_PLAYER, {"player_id": player_id}) is None:
        raise NotFound("player")


def refuse_if_unfinished(session: Session, player_id: int) -> None:
    """One hand at a time: a tie awaiting its decision blocks new hands and seed rotation."""
    refuse_unfinished(session.scalar(_UNFINISHED_HAND, {"player_id": player_id}))


def refuse_unfinished(unfinished_hand: int | None) -> None:
    if unfinished_hand is not None:
        raise Conflict(
            "unfinished_hand", f"hand {unfinished_hand} awaits a decision; decide it first"
        )
