"""A player's actions, one at a time.

Every unit of work that moves a player's money or changes their game first locks the
player's row, so that a player's requests serialise (on SQLite, BEGIN IMMEDIATE already
serialises every writer). The lock order everywhere is: player row, then the ledger
accounts in id order, then the ledger's chain head; so no two requests can deadlock.
"""

from sqlalchemy import select
from sqlalchemy.orm import Session

from api.db.models import HandRecord, Player
from api.problems import Problem, not_found
from casino.hand import HandStatus


def lock_player(session: Session, player_id: int) -> Player:
    """Load a player and, on PostgreSQL, lock the row for the rest of the transaction."""
    player = session.scalar(select(Player).where(Player.id == player_id).with_for_update())
    if player is None:
        raise not_found("player")
    return player


def refuse_if_unfinished(session: Session, player_id: int) -> None:
    """One hand at a time: a tie awaiting its decision blocks new hands and seed rotation."""
    unfinished = session.scalar(
        select(HandRecord.id).where(
            HandRecord.player_id == player_id,
            HandRecord.status == HandStatus.AWAITING_DECISION.value,
        )
    )
    if unfinished is not None:
        raise Problem(
            409, "unfinished_hand", f"hand {unfinished} awaits a decision; decide it first"
        )
