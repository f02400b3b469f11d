"""Players, their tokens and their wallets."""

from datetime import UTC, datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from api.auth import Role, issue_token
from api.db.models import CasinoTable, Player
from api.problems import not_found, validation_problem
from api.schemas import Balance, PlayerCreated, PlayerView
from ledger import chart
from ledger.posting import balances


def create_player(
    session: Session, display_name: str | None, external_ref: str | None
) -> PlayerCreated:
    if external_ref is not None and session.scalar(
        select(Player.id).where(Player.external_ref == external_ref)
    ):
        raise validation_problem("external_ref", "is already used by another player")
    player = Player(
        display_name=display_name, external_ref=external_ref, created_at=datetime.now(UTC)
    )
    session.add(player)
    session.flush()
    token = issue_token(session, Role.PLAYER, player_id=player.id)
    return PlayerCreated(
        id=player.id, display_name=display_name, external_ref=external_ref, token=token
    )


def lock_player(session: Session, player_id: int) -> Player:
    """Load a player and, on PostgreSQL, lock the row: one money move per player at a time."""
    player = session.scalar(select(Player).where(Player.id == player_id).with_for_update())
    if player is None:
        raise not_found("player")
    return player


def offered_currencies(session: Session, default_currency: str) -> list[str]:
    """The currencies this casino deals in: the configured one and every table's."""
    table_currencies = session.scalars(select(CasinoTable.currency).distinct()).all()
    return sorted({default_currency, *table_currencies})


def view_player(session: Session, player_id: int, default_currency: str) -> PlayerView:
    player = session.get(Player, player_id)
    if player is None:
        raise not_found("player")
    key = str(player.id)
    currencies = offered_currencies(session, default_currency)
    codes = [spec.code for c in currencies for spec in (chart.wallet(key, c), chart.held(key, c))]
    found = balances(session, codes)
    return PlayerView(
        id=player.id,
        display_name=player.display_name,
        balances=[
            Balance(
                currency=c,
                available=found.get(chart.wallet(key, c).code, 0),
                held=found.get(chart.held(key, c).code, 0),
            )
            for c in currencies
        ],
    )
