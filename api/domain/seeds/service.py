"""Fairness seed pairs: commitment before play, reveal on rotation."""

from dataclasses import dataclass
from datetime import UTC, datetime

from sqlalchemy import bindparam, select
from sqlalchemy.orm import Session

from api.db.models import SeedPair
from api.domain.events.service import record_event
from api.domain.players.turn import lock_player, refuse_if_unfinished
from api.domain.tokens.service import Principal
from api.errors import NotFound
from api.pagination import Page, decode_cursor, next_cursor
from casino.fairness import new_client_seed, new_server_seed, server_seed_hash


@dataclass(frozen=True, slots=True)
class Commitment:
    """What a player sees before playing: the hash of the secret server seed."""

    server_seed_hash: str
    client_seed: str
    next_nonce: int


@dataclass(frozen=True, slots=True)
class RevealedPair:
    """A retired pair with its server seed: everything needed to re-derive its hands."""

    server_seed: str
    server_seed_hash: str
    client_seed: str
    hands: int
    revealed_at: datetime | None


@dataclass(frozen=True, slots=True)
class Rotation:
    revealed: RevealedPair
    current: Commitment


def commit_new_pair(
    session: Session, player_id: int, client_seed: str | None, actor: Principal | None = None
) -> SeedPair:
    """A fresh pair for the player, whose hash is the commitment shown before play."""
    server_seed = new_server_seed()
    pair = SeedPair(
        player_id=player_id,
        server_seed=server_seed,
        server_seed_hash=server_seed_hash(server_seed),
        client_seed=client_seed or new_client_seed(),
        next_nonce=0,
        created_at=datetime.now(UTC),
        created_by_token=None if actor is None else actor.token_id,
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


def _commitment(pair: SeedPair) -> Commitment:
    return Commitment(
        server_seed_hash=pair.server_seed_hash,
        client_seed=pair.client_seed,
        next_nonce=pair.next_nonce,
    )


def current_commitment(session: Session, player_id: int) -> Commitment:
    return _commitment(active_pair(session, player_id))


def _revealed(pair: SeedPair) -> RevealedPair:
    return RevealedPair(
        server_seed=pair.server_seed,
        server_seed_hash=pair.server_seed_hash,
        client_seed=pair.client_seed,
        hands=pair.next_nonce,
        revealed_at=pair.revealed_at,
    )


def rotate(
    session: Session, player_id: int, client_seed: str | None, actor: Principal | None = None
) -> Rotation:
    """Reveal the current server seed and commit to a new one; the nonce restarts at 0.
    A significant event: who rotated, and to which client seed."""
    lock_player(session, player_id)
    refuse_if_unfinished(session, player_id)
    old = active_pair(session, player_id, for_update=True)
    old.revealed_at = datetime.now(UTC)
    session.flush()
    new = commit_new_pair(session, player_id, client_seed, actor)
    record_event(
        session,
        "seeds_rotated",
        actor,
        player_id=player_id,
        subject={"revealed_pair": old.id, "new_pair": new.id},
        details={
            "revealed_server_seed_hash": old.server_seed_hash,
            "new_server_seed_hash": new.server_seed_hash,
            "client_seed": new.client_seed,
        },
    )
    return Rotation(revealed=_revealed(old), current=_commitment(new))


def revealed_pairs(
    session: Session, player_id: int, cursor: str | None, limit: int
) -> Page[RevealedPair]:
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
    return Page(tuple(map(_revealed, pairs)), next_cursor([p.id for p in pairs], limit))
