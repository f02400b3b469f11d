"""Players, their tokens and their wallets."""

from datetime import UTC, datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from api.db.models import CasinoTable, Player
from api.db.unique import add_unique
from api.domain.players.schemas import Balance, PlayerCreated, PlayerToken, PlayerView
from api.domain.players.turn import lock_player
from api.domain.seeds import service as seeds
from api.domain.tokens.service import Role, issue_token
from api.errors import NotFound
from ledger import chart
from ledger.posting import balances


def create_player(
    session: Session, display_name: str | None, external_ref: str | None
) -> PlayerCreated:
    player = Player(
        display_name=display_name, external_ref=external_ref, created_at=datetime.now(UTC)
    )
    add_unique(session, player, field="external_ref", message="is already used by another player")
    seeds.commit_new_pair(session, player.id, client_seed=None)
    token = issue_token(session, Role.PLAYER, player_id=player.id)
    return PlayerCreated(
        id=player.id, display_name=display_name, external_ref=external_ref, token=token
    )


def issue_player_token(session: Session, player_id: int) -> PlayerToken:
    """Another token for a player (a lost one, or one an idempotent replay could not show)."""
    lock_player(session, player_id)
    return PlayerToken(
        player_id=player_id, token=issue_token(session, Role.PLAYER, player_id=player_id)
    )


def offered_currencies(session: Session, default_currency: str) -> list[str]:
    """The currencies this casino deals in: the configured one and every table's."""
    table_currencies = session.scalars(select(CasinoTable.currency).distinct()).all()
    return sorted({default_currency, *table_currencies})


def view_player(session: Session, player_id: int, default_currency: str) -> PlayerView:
    player = session.get(Player, player_id)
    if player is None:
        raise NotFound("player")
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
