"""Limits and self-exclusions: what the player (or an operator for them) sets, and what is
in force at an instant.

A limit's history is kept: each change is a row, and the limit in force is the newest
change already effective. Tightening is effective at once; loosening (a higher amount, or
removing the limit) only after the cooling-off period, shown meanwhile as pending. A newer
tightening overrides a pending loosening. An exclusion cannot be shortened or lifted.
"""

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from api.db.models import Player, PlayerLimit, SelfExclusion
from api.domain.events.service import record_event
from api.domain.players.turn import lock_player
from api.domain.protection.policy import Period, ProtectionPolicy, now
from api.domain.tokens.service import Principal
from api.errors import Conflict, InvalidInput, NotFound

LimitKind = Literal["deposit", "loss", "wager", "max_bet", "play_time"]
PERIODIC: frozenset[str] = frozenset({"deposit", "loss", "wager"})
MAX_PLAY_SECONDS = 86_400


@dataclass(frozen=True, slots=True)
class LimitChange:
    """What a request asks: `amount` None removes the limit."""

    kind: LimitKind
    period: Period | None
    currency: str | None
    amount: int | None


@dataclass(frozen=True, slots=True)
class Pending:
    amount: int | None
    effective_at: datetime


@dataclass(frozen=True, slots=True)
class Limit:
    kind: str
    period: str | None
    currency: str | None
    amount: int | None  # in force now; None: no limit in force
    pending: Pending | None


@dataclass(frozen=True, slots=True)
class Limits:
    player_id: int
    cooling_off_seconds: int
    limits: tuple[Limit, ...]


@dataclass(frozen=True, slots=True)
class Exclusion:
    player_id: int
    excluded: bool
    since: datetime | None
    until: datetime | None
    reason: str | None


Key = tuple[str, str | None, str | None]


def in_force(rows: Iterable[PlayerLimit], at: datetime) -> dict[Key, PlayerLimit]:
    """Per limit, the newest change already effective at `at` (removals included)."""
    found: dict[Key, PlayerLimit] = {}
    for row in sorted(rows, key=lambda r: r.id):
        if row.effective_at <= at:
            found[(row.kind, row.period, row.currency)] = row
    return found


def limit_rows(session: Session, player_id: int) -> list[PlayerLimit]:
    return list(session.scalars(select(PlayerLimit).where(PlayerLimit.player_id == player_id)))


def limits_of(session: Session, player_id: int, policy: ProtectionPolicy) -> Limits:
    rows = limit_rows(session, player_id)
    at = now()
    current = in_force(rows, at)
    limits = []
    for key in sorted({(r.kind, r.period, r.currency) for r in rows}, key=str):
        row = current.get(key)
        waiting = [r for r in rows if (r.kind, r.period, r.currency) == key and r.effective_at > at]
        newest = max(waiting, key=lambda r: r.id) if waiting else None
        overridden = newest is not None and row is not None and row.id > newest.id
        pending = (
            None if newest is None or overridden else Pending(newest.amount, newest.effective_at)
        )
        amount = None if row is None else row.amount
        if amount is None and pending is None:
            continue
        limits.append(Limit(key[0], key[1], key[2], amount, pending))
    return Limits(player_id, int(policy.cooling_off.total_seconds()), tuple(limits))


def set_limits(
    session: Session,
    player_id: int,
    changes: Sequence[LimitChange],
    policy: ProtectionPolicy,
    actor: Principal | None,
) -> Limits:
    """Record each change: at once when it tightens, after the cooling-off when it loosens."""
    lock_player(session, player_id)
    at = now()
    current = in_force(limit_rows(session, player_id), at)
    for change in changes:
        _check(change)
        row = current.get((change.kind, change.period, change.currency))
        amount_now = None if row is None else row.amount
        if change.amount is None and amount_now is None:
            continue  # nothing in force to remove
        tightens = change.amount is not None and (amount_now is None or change.amount <= amount_now)
        effective_at = at if tightens else at + policy.cooling_off
        session.add(
            PlayerLimit(
                player_id=player_id,
                kind=change.kind,
                period=change.period,
                currency=change.currency,
                amount=change.amount,
                effective_at=effective_at,
                created_at=at,
                token_id=None if actor is None else actor.token_id,
            )
        )
        record_event(
            session,
            "limit_changed",
            actor,
            player_id=player_id,
            subject={"kind": change.kind, "period": change.period, "currency": change.currency},
            details={
                "from": amount_now,
                "to": change.amount,
                "effective_at": effective_at.isoformat(),
            },
        )
    _mark_protected(session, player_id)
    session.flush()
    return limits_of(session, player_id, policy)


def _check(change: LimitChange) -> None:
    if change.kind in PERIODIC and change.period is None:
        raise InvalidInput("period", f"a {change.kind} limit needs a period: day, week or month")
    if change.kind == "max_bet" and change.period is not None:
        raise InvalidInput("period", "a maximum single bet has no period")
    if change.kind == "play_time" and change.period != "day":
        raise InvalidInput("period", "play time is limited per gaming day: period day")
    if change.kind == "play_time" and change.currency is not None:
        raise InvalidInput("currency", "play time has no currency")
    if change.kind != "play_time" and change.currency is None:
        raise InvalidInput("currency", "a money limit needs its currency")
    if change.amount is not None and change.amount < 1:
        raise InvalidInput("amount", "must be at least 1, or null to remove the limit")
    if (
        change.kind == "play_time"
        and change.amount is not None
        and change.amount > MAX_PLAY_SECONDS
    ):
        raise InvalidInput("amount", f"play time is at most {MAX_PLAY_SECONDS} seconds a day")


def require_player(session: Session, player_id: int) -> None:
    if session.get(Player, player_id) is None:
        raise NotFound("player")


def _mark_protected(session: Session, player_id: int) -> None:
    session.execute(update(Player).where(Player.id == player_id).values(protected=True))


def active_exclusion(session: Session, player_id: int, at: datetime) -> SelfExclusion | None:
    """The exclusion reaching furthest among those in force at `at`."""
    rows = session.scalars(
        select(SelfExclusion).where(
            SelfExclusion.player_id == player_id, SelfExclusion.starts_at <= at
        )
    )
    active = [r for r in rows if r.until is None or r.until > at]
    if not active:
        return None
    return max(active, key=lambda r: (r.until is None, r.until or at))


def exclusion_of(session: Session, player_id: int) -> Exclusion:
    row = active_exclusion(session, player_id, now())
    if row is None:
        return Exclusion(player_id, False, None, None, None)
    return Exclusion(player_id, True, row.starts_at, row.until, row.reason)


def exclude(
    session: Session,
    player_id: int,
    until: datetime | None,
    reason: str | None,
    actor: Principal | None,
) -> Exclusion:
    """Start (or extend) a time-out or self-exclusion; one in force is never shortened."""
    lock_player(session, player_id)
    at = now()
    if until is not None and until <= at:
        raise InvalidInput("until", "must be in the future, or null for an indefinite exclusion")
    current = active_exclusion(session, player_id, at)
    if current is not None and (
        current.until is None or (until is not None and until < current.until)
    ):
        raise Conflict(
            "exclusion_active",
            "an exclusion in force cannot be shortened or lifted; it ends "
            + ("never" if current.until is None else current.until.isoformat()),
        )
    session.add(
        SelfExclusion(
            player_id=player_id,
            starts_at=at,
            until=until,
            reason=reason,
            created_at=at,
            token_id=None if actor is None else actor.token_id,
        )
    )
    record_event(
        session,
        "exclusion_set",
        actor,
        player_id=player_id,
        subject={"player_id": player_id},
        details={"until": None if until is None else until.isoformat(), "reason": reason},
    )
    _mark_protected(session, player_id)
    session.flush()
    return exclusion_of(session, player_id)
