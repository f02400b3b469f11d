"""Hands awaiting a decision, and the house resolving the abandoned ones.

A tie waits for the player. Once it has waited longer than `decision_timeout_seconds` the
house resolves it with `abandoned_tie_action`: surrender by default, because resolving must
never take more of the player's money without their consent. If `war` is configured and the
wallet cannot cover the raise, the hand is surrendered instead. A table that forbids
surrender leaves a configured surrender nothing to do: the hand is skipped and reported, for
a person to settle with the player. Each hand is resolved in its own transaction, recorded
with `decided_by = "timeout"`.
"""

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Literal

from sqlalchemy import select
from sqlalchemy.orm import Session

from api.db.database import Database
from api.db.models import hands_table
from api.db.units import savepoint
from api.domain.events.service import record_event
from api.domain.hands.service import decide_hand
from api.domain.players.turn import lock_player
from api.domain.tokens.service import Principal
from api.errors import DomainError
from casino.errors import HandNotAwaitingDecision, SurrenderNotAllowed
from casino.hand import Action, HandStatus
from ledger.errors import LimitExceeded

Resolution = Literal["surrender", "war", "skipped"]


@dataclass(frozen=True, slots=True)
class UnfinishedHand:
    """A hand awaiting its player's decision, and how long it has waited."""

    id: int
    player_id: int
    table_id: int
    currency: str
    bet: int
    tie_bet: int
    total_staked: int
    player_card: str
    dealer_card: str
    created_at: datetime
    waiting_seconds: int
    overdue: bool


def unfinished_hands(
    session: Session, timeout_seconds: int, now: datetime | None = None
) -> list[UnfinishedHand]:
    """Every hand awaiting a decision, oldest first (there is at most one per player)."""
    moment = now or datetime.now(UTC)
    h = hands_table.c
    rows = session.execute(
        select(
            h.id,
            h.player_id,
            h.table_id,
            h.currency,
            h.bet,
            h.tie_bet,
            h.total_staked,
            h.player_card,
            h.dealer_card,
            h.created_at,
        )
        .where(h.status == HandStatus.AWAITING_DECISION.value)
        .order_by(h.created_at, h.id)
    ).all()
    limit = timedelta(seconds=timeout_seconds)
    return [
        UnfinishedHand(
            id=row.id,
            player_id=row.player_id,
            table_id=row.table_id,
            currency=row.currency,
            bet=row.bet,
            tie_bet=row.tie_bet,
            total_staked=row.total_staked,
            player_card=row.player_card,
            dealer_card=row.dealer_card,
            created_at=row.created_at,
            waiting_seconds=int((moment - row.created_at).total_seconds()),
            overdue=moment - row.created_at > limit,
        )
        for row in rows
    ]


@dataclass(frozen=True, slots=True)
class ResolvedHand:
    hand_id: int
    resolution: Resolution
    reason: str
    outcome: str | None = None
    net: int | None = None


def _decide(
    session: Session, hand_id: int, action: Action, reason: str, actor: Principal | None
) -> ResolvedHand:
    # A savepoint: a refusal (the wallet short of the raise) leaves the hand as it was, for
    # the fallback to decide it in the same transaction.
    with savepoint(session):
        hand = decide_hand(session, hand_id, action, player_id=None, decided_by="timeout")
        record_event(
            session,
            "hand_resolved_by_timeout",
            actor,
            player_id=hand.player_id,
            subject={"hand_id": hand_id},
            details={"action": action.value, "reason": reason, "outcome": hand.outcome},
        )
    return ResolvedHand(hand_id, action.value, reason, hand.outcome, hand.net)


def resolve_in(
    session: Session, hand_id: int, configured: Action, actor: Principal | None = None
) -> ResolvedHand:
    """Resolve one abandoned hand in the caller's transaction, as the house: the configured
    action, surrender when the wallet cannot cover a war, skipped when neither may be
    taken or the player decided meanwhile."""
    try:
        if configured is Action.WAR:
            try:
                return _decide(session, hand_id, Action.WAR, "timeout", actor)
            except LimitExceeded:
                reason = "the wallet cannot cover the raise: surrendered instead"
                return _decide(session, hand_id, Action.SURRENDER, reason, actor)
        return _decide(session, hand_id, Action.SURRENDER, "timeout", actor)
    except SurrenderNotAllowed:
        reason = "the table forbids surrender, and war would take money without consent"
        return ResolvedHand(hand_id, "skipped", reason)
    except HandNotAwaitingDecision as settled:  # decided by the player meanwhile
        return ResolvedHand(hand_id, "skipped", f"{settled.code}: {settled}")
    except DomainError as problem:  # gone
        return ResolvedHand(hand_id, "skipped", f"{problem.code}: {problem.detail}")


def resolve_one(database: Database, hand_id: int, configured: Action) -> ResolvedHand:
    """Resolve one abandoned hand in a transaction of its own (the command line's way: a
    large backlog is not one long transaction)."""
    with database.transaction() as session:
        return resolve_in(session, hand_id, configured)


def resolve_overdue(
    session: Session,
    timeout_seconds: int,
    configured: Literal["surrender", "war"],
    actor: Principal | None,
) -> list[ResolvedHand]:
    """Every overdue hand resolved in the caller's transaction (the back office's way: one
    request, one answer, retried safely with its Idempotency-Key).

    Their players' rows are locked first, in id order, as every request takes a player's
    row before any chain's head: resolving a hand locks its chain's head until the
    transaction ends, and a player reached afterwards could be holding their own row while
    waiting for that head (a deposit, their own decision on the same chain)."""
    overdue = [hand for hand in unfinished_hands(session, timeout_seconds) if hand.overdue]
    for player_id in sorted({hand.player_id for hand in overdue}):
        lock_player(session, player_id)
    return [resolve_in(session, hand.id, Action(configured), actor) for hand in overdue]


def resolve_abandoned(
    database: Database,
    timeout_seconds: int,
    configured: Literal["surrender", "war"],
    now: datetime | None = None,
) -> list[ResolvedHand]:
    """Resolve every hand that has waited longer than the timeout."""
    with database.reading() as session:
        overdue = [h.id for h in unfinished_hands(session, timeout_seconds, now) if h.overdue]
    action = Action(configured)
    return [resolve_one(database, hand_id, action) for hand_id in overdue]
