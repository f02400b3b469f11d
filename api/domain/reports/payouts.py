"""The operator payout report: what was staked, returned and won, per gaming day, table or
player, next to what the rules say the house should win in theory.

Money comes from the LEDGER (each hand's stake and raise transfers, and what its settlement
returned to the wallet) and is cross-checked against the hand records; a hand whose ledger
and record disagree is listed as a discrepancy (the ledger's figure is the one reported).
The shell is this module and `settled` (the reads); the arithmetic is `aggregate`, pure.
"""

from datetime import UTC, datetime
from zoneinfo import ZoneInfo

from sqlalchemy import Connection
from sqlalchemy.orm import Session

from api.db.snapshot import connection_of
from api.domain.reports.aggregate import aggregate
from api.domain.reports.gaming_day import DayRange, day_bounds
from api.domain.reports.results import GamingDayWindow, GroupBy, PayoutReport
from api.domain.reports.settled import settled_hands
from api.version import SOFTWARE_VERSION
from casino.version import ENGINE_VERSION


def payout_report(
    session_or_connection: Session | Connection,
    days: DayRange,
    group_by: GroupBy,
    zone: ZoneInfo,
    start_hour: int,
) -> PayoutReport:
    """The report for gaming days `days`, each hand placed by the day of its settlement."""
    connection = connection_of(session_or_connection)
    start, end = day_bounds(days.first, days.last, zone, start_hour)
    payouts = aggregate(settled_hands(connection, start, end, zone, start_hour), group_by)
    return PayoutReport(
        from_day=days.first,
        to_day=days.last,
        group_by=group_by,
        gaming_day=GamingDayWindow(zone.key, start_hour, start, end),
        rows=payouts.rows,
        totals=payouts.totals,
        discrepancies=payouts.discrepancies,
        generated_at=datetime.now(UTC),
        software_version=SOFTWARE_VERSION,
        engine_version=ENGINE_VERSION,
    )
