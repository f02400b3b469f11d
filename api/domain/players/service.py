"""Players and their wallets."""

from dataclasses import dataclass
from datetime import UTC, datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from api.db.models import CasinoTable, Player
from api.db.unique import add_unique
from api.domain.players.turn import lock_player
from api.domain.seeds import service as seeds
from api.domain.tokens.service import Role, issue_token
from api.errors import NotFound
from ledger import chart
from ledger.posting import balances


@dataclass(frozen=True, slots=True)
class NewPlayer:
    """A registered player and their first token, the only time the token exists in clear."""

    id: int
    display_name: str | None
    external_ref: str | None
    token: str


@dataclass(frozen=True, slots=True)
class IssuedToken:
    player_id: int
    token: str


@dataclass(frozen=True, slots=True)
class Balance:
    currency: str
    available: int
    held: int


@dataclass(frozen=True, slots=True)
class Wallet:
    id: int
    display_name: str | None
    balances: tuple[Balance, ...]


def create_player(
    session: Session, display_name: str | None, external_ref: str | None
) -> NewPlayer:
    player = Player(
        display_name=display_name, external_ref=external_ref, created_at=datetime.now(UTC)
    )
    add_unique(session, player, field="external_ref", message="is already used by another player")
    seeds.commit_new_pair(session, player.id, client_seed=None)
    token = issue_token(session, Role.PLAYER, player_id=player.id)
    return NewPlayer(player.id, display_name, external_ref, token)


def issue_player_token(session: Session, player_id: int) -> IssuedToken:
    """Another token for a player (a lost one, or one an idempotent replay could not show)."""
    lock_player(session, player_id)
    return IssuedToken(player_id, issue_token(session, Role.PLAYER, player_id=player_id))


def offered_currencies(session: Session, default_currency: str) -> list[str]:
    """The currencies this casino deals in: the configured one and every table's."""
    table_currencies = session.scalars(select(CasinoTable.currency).distinct()).all()
    return sorted({default_currency, *table_currencies})


def wallet(session: Session, player_id: int, default_currency: str) -> Wallet:
    player = session.get(Player, player_id)
    if player is None:
        raise NotFound("player")
    key = str(player.id)
    currencies = offered_currencies(session, default_currency)
    codes = [spec.code for c in currencies for spec in (chart.wallet(key, c), chart.held(key, c))]
    found = balances(session, codes)
    return Wallet(
        player.id,
        player.display_name,
        tuple(
            Balance(
                currency=c,
                available=found.get(chart.wallet(key, c).code, 0),
                held=found.get(chart.held(key, c).code, 0),
            )
            for c in currencies
        ),
    )
