"""Players and their wallets."""

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from sqlalchemy import select
from sqlalchemy.orm import Session

from api.db.models import CasinoTable, Player
from api.db.unique import add_unique
from api.domain.events.service import record_event
from api.domain.players.turn import lock_player
from api.domain.seeds import service as seeds
from api.domain.tokens.lifecycle import issue_recorded
from api.domain.tokens.service import Principal, Role
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
    session: Session,
    display_name: str | None,
    external_ref: str | None,
    actor: Principal | None = None,
    token_ttl: timedelta | None = None,
) -> NewPlayer:
    """Register a player with a seed pair and a first token; both recorded as events with
    the operator who asked."""
    player = Player(
        display_name=display_name,
        external_ref=external_ref,
        created_at=datetime.now(UTC),
        created_by_token=None if actor is None else actor.token_id,
    )
    add_unique(session, player, field="external_ref", message="is already used by another player")
    seeds.commit_new_pair(session, player.id, client_seed=None, actor=actor)
    record_event(
        session,
        "player_created",
        actor,
        player_id=player.id,
        subject={"player_id": player.id},
        details={"display_name": display_name, "external_ref": external_ref},
    )
    _, token = issue_recorded(session, Role.PLAYER, actor, player_id=player.id, ttl=token_ttl)
    return NewPlayer(player.id, display_name, external_ref, token)


def issue_player_token(
    session: Session,
    player_id: int,
    actor: Principal | None = None,
    token_ttl: timedelta | None = None,
) -> IssuedToken:
    """Another token for a player (a lost one, or one an idempotent replay could not show):
    a significant event, since it lets its holder act as the player."""
    lock_player(session, player_id)
    _, token = issue_recorded(session, Role.PLAYER, actor, player_id=player_id, ttl=token_ttl)
    return IssuedToken(player_id, token)


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
