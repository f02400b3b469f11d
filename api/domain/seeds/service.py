"""Fairness seed pairs: commitment before play, reveal on rotation."""

from datetime import UTC, datetime

from sqlalchemy import bindparam, select
from sqlalchemy.orm import Session

from api.db.models import SeedPair
from api.domain.players.turn import lock_player, refuse_if_unfinished
from api.domain.seeds.schemas import RevealedSeedPage, RevealedSeedPair, SeedRotation, SeedState
from api.errors import NotFound
from api.pagination import decode_cursor, next_cursor
from casino.fairness import new_client_seed, new_server_seed, server_seed_hash


def commit_new_pair(session: Session, player_id: int, client_seed: str | None) -> SeedPair:
    """A fresh pair for the player, whose hash is the commitment shown before play."""
    server_seed = new_server_seed()
    pair = SeedPair(
        player_id=player_id,
        server_seed=server_seed,
        server_seed_hash=server_seed_hash(server_seed),
        client_seed=client_seed or new_client_seed(),
        next_nonce=0,
        created_at=datetime.now(UTC),
    )
    session.add(pair)
    session.flush()
    return pair


# Every hand reads the active pair: built once, with a bound parameter.
_ACTIVE_PAIR = select(SeedPair).where(
    SeedPair.player_id == bindparam("player_id"), SeedPair.revealed_at.is_(None)
)
_LOCK_ACTIVE_PAIR = _ACTIVE_PAIR.with_for_update()


def active_pair(session: Session, player_id: int, *, for_update: bool = False) -> SeedPair:
    """The player's current pair: every player has one from creation on."""
    query = _LOCK_ACTIVE_PAIR if for_update else _ACTIVE_PAIR
    pair = session.scalar(query, {"player_id": player_id})
    if pair is None:
        raise NotFound("seed pair")
    return pair


def state(pair: SeedPair) -> SeedState:
    return SeedState(
        server_seed_hash=pair.server_seed_hash,
        client_seed=pair.client_seed,
        next_nonce=pair.next_nonce,
    )


def current_state(session: Session, player_id: int) -> SeedState:
    return state(active_pair(session, player_id))


def _revealed(pair: SeedPair) -> RevealedSeedPair:
    return RevealedSeedPair(
        server_seed=pair.server_seed,
        server_seed_hash=pair.server_seed_hash,
        client_seed=pair.client_seed,
        hands=pair.next_nonce,
        revealed_at=pair.revealed_at,
    )


def rotate(session: Session, player_id: int, client_seed: str | None) -> SeedRotation:
    """Reveal the current server seed and commit to a new one; the nonce restarts at 0."""
    lock_player(session, player_id)
    refuse_if_unfinished(session, player_id)
    old = active_pair(session, player_id, for_update=True)
    old.revealed_at = datetime.now(UTC)
    session.flush()
    new = commit_new_pair(session, player_id, client_seed)
    return SeedRotation(revealed=_revealed(old), current=state(new))


def revealed_pairs(
    session: Session, player_id: int, cursor: str | None, limit: int
) -> RevealedSeedPage:
    after = decode_cursor(cursor)
    query = (
        select(SeedPair)
        .where(SeedPair.player_id == player_id, SeedPair.revealed_at.is_not(None))
        .order_by(SeedPair.id.desc())
        .limit(limit)
    )
    if after is not None:
        query = query.where(SeedPair.id < after)
    pairs = list(session.scalars(query))
    return RevealedSeedPage(
        items=[_revealed(p) for p in pairs], next_cursor=next_cursor([p.id for p in pairs], limit)
    )
