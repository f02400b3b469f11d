"""What a player's protections refuse: new hands and deposits, each refusal moving nothing.

Only players flagged `protected` (they set a limit or an exclusion once) come here, so the
ledger and hand reads below cost nothing to anyone else. Money figures come from the
ledger over the limit's period: deposits, stakes and raises (wagered), and stakes and
raises less what came back (net loss). Play time is the time between the day's hands, each
gap counted up to the idle gap (a pause longer than that is a break, not play), including
the time since the last hand.
"""

from datetime import datetime, timedelta

from sqlalchemy import select
from sqlalchemy.orm import Session

from api.db.models import HandRecord, PlayerLimit
from api.domain.protection.policy import PERIODS, Period, ProtectionPolicy, now
from api.domain.protection.service import active_exclusion, in_force, limit_rows
from api.domain.statements.service import StatementLine, statements
from api.errors import Refused, Restricted

_UNTIL_LATER = timedelta(days=1)


def refuse_if_excluded(session: Session, player_id: int, at: datetime) -> None:
    exclusion = active_exclusion(session, player_id, at)
    if exclusion is not None:
        ends = "indefinitely" if exclusion.until is None else f"until {exclusion.until.isoformat()}"
        raise Restricted("self_excluded", f"the player is excluded from play {ends}")


def refuse_new_hand(
    session: Session,
    player_id: int,
    currency: str,
    bet: int,
    tie_bet: int,
    policy: ProtectionPolicy,
) -> None:
    """Exclusion, maximum single bet, wager, loss and play-time limits, in that order. The
    loss limit counts the hand's worst case: bet, tie bet and the raise of a war."""
    at = now()
    refuse_if_excluded(session, player_id, at)
    limits = in_force(limit_rows(session, player_id), at)
    for (kind, period, limit_currency), row in limits.items():
        if row.amount is None or limit_currency not in (currency, None):
            continue
        if kind == "max_bet" and max(bet, tie_bet) > row.amount:
            raise Refused(
                "wager_limit_exceeded", f"a single bet is limited to {row.amount} {currency}"
            )
        if kind == "wager":
            line = _period_line(session, player_id, currency, row, policy, at)
            if line.staked + bet + tie_bet > row.amount:
                raise Refused("wager_limit_exceeded", _left("wager", row, line.staked, currency))
        if kind == "loss":
            line = _period_line(session, player_id, currency, row, policy, at)
            lost = line.staked - line.returned
            if lost + bet + tie_bet + bet > row.amount:
                raise Refused("loss_limit_exceeded", _left("loss", row, lost, currency))
        if kind == "play_time" and period == "day":
            played = _play_seconds(session, player_id, policy, at)
            if played >= row.amount:
                raise Restricted(
                    "time_limit_reached",
                    f"today's play time limit of {row.amount} seconds is reached",
                )


def refuse_deposit(
    session: Session, player_id: int, currency: str, amount: int, policy: ProtectionPolicy
) -> None:
    at = now()
    refuse_if_excluded(session, player_id, at)
    for (kind, _, limit_currency), row in in_force(limit_rows(session, player_id), at).items():
        if kind != "deposit" or row.amount is None or limit_currency != currency:
            continue
        line = _period_line(session, player_id, currency, row, policy, at)
        if line.deposits + amount > row.amount:
            raise Refused("deposit_limit_exceeded", _left("deposit", row, line.deposits, currency))


def _left(kind: str, row: PlayerLimit, used: int, currency: str) -> str:
    return (
        f"the {row.period} {kind} limit is {row.amount} {currency}; "
        f"{max(row.amount or 0, used) - used} left this {row.period}"
    )


def _period_line(
    session: Session,
    player_id: int,
    currency: str,
    row: PlayerLimit,
    policy: ProtectionPolicy,
    at: datetime,
) -> StatementLine:
    period: Period = PERIODS.get(row.period or "day", "day")
    start = policy.period_start(period, at)
    lines = statements(session.connection(), start, at + _UNTIL_LATER, player_id)
    for line in lines:
        if line.currency == currency:
            return line
    return StatementLine(currency, 0, 0, 0, 0, 0, 0, 0, player_id)


def _play_seconds(session: Session, player_id: int, policy: ProtectionPolicy, at: datetime) -> int:
    start = policy.period_start("day", at)
    times = list(
        session.scalars(
            select(HandRecord.created_at)
            .where(HandRecord.player_id == player_id, HandRecord.created_at >= start)
            .order_by(HandRecord.created_at)
        )
    )
    if not times:
        return 0
    idle = policy.idle_gap
    gaps = [later - earlier for earlier, later in zip(times, [*times[1:], at], strict=True)]
    return int(sum((min(gap, idle) for gap in gaps), timedelta()).total_seconds())
