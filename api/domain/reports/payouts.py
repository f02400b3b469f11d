"""The operator payout report: what was staked, returned and won, per gaming day, table or
player, next to what the rules say the house should win in theory.

Money comes from the LEDGER (each hand's stake and raise transfers, and what its settlement
returned to the wallet) and is cross-checked against the hand records; a hand whose ledger
and record disagree is listed as a discrepancy (the ledger's figure is the one reported).

The computation is a pure function over `SettledHand` values (`aggregate`), testable without
a database; `payout_report` only streams the rows in.
"""

import csv
import io
import json
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import date, datetime
from fractions import Fraction
from functools import cache
from typing import Any, Final, Literal
from zoneinfo import ZoneInfo

from sqlalchemy import Connection, String, cast, select, tuple_
from sqlalchemy.orm import Session

from api.db.models import hands_table
from api.db.snapshot import connection_of
from api.domain.hands.ledger import AccountCodes, LedgerTxn, fetch_hand_ledger, reference
from api.domain.reports.gaming_day import day_bounds, gaming_day
from casino.hand import HandStatus, Outcome
from casino.odds import Odds, exact_odds
from casino.rules import GameRules, TableRules
from ledger import chart

GroupBy = Literal["day", "table", "player"]
GROUP_KEYS: Final[dict[str, str]] = {"day": "day", "table": "table_id", "player": "player_id"}
BATCH: Final = 2000
MAX_LISTED_DISCREPANCIES: Final = 1000
WAR_OUTCOMES: Final = frozenset(
    {Outcome.WAR_WIN.value, Outcome.WAR_TIE.value, Outcome.WAR_LOSS.value}
)
TIED_OUTCOMES: Final = WAR_OUTCOMES | {Outcome.SURRENDER.value}


@dataclass(frozen=True, slots=True)
class SettledHand:
    """One settled hand as the report sees it: record figures and ledger figures side by side.

    `ledger_staked` / `ledger_returned` are None when the ledger has no such transaction.
    """

    hand_id: int
    day: date
    table_id: int
    player_id: int
    currency: str
    rules: str  # recorded rules (JSON text): the key for the exact odds
    bet: int
    tie_bet: int
    raise_amount: int
    total_staked: int
    total_returned: int
    net: int
    outcome: str
    ledger_staked: int | None
    ledger_returned: int | None


@dataclass(frozen=True, slots=True)
class Discrepancy:
    hand_id: int
    field: str
    ledger: int | None
    record: int

    def as_dict(self) -> dict[str, Any]:
        return {
            "hand_id": self.hand_id,
            "field": self.field,
            "ledger": self.ledger,
            "record": self.record,
        }


@cache
def _odds(game: GameRules) -> Odds:
    return exact_odds(game)


@cache
def odds_for_rules(rules: str) -> Odds:
    """Exact odds of a recorded rule set; cached per distinct rules text (and rule set)."""
    return _odds(TableRules.from_dict(json.loads(rules)).game)


@dataclass(slots=True)
class _Group:
    hands: int = 0
    handle: int = 0
    returned: int = 0
    ties: int = 0
    wars: int = 0
    surrenders: int = 0
    tie_bets_won: int = 0
    # rules text -> [main bets of hands not surrendered, main bets surrendered, tie bets]
    bets: dict[str, list[int]] = field(default_factory=dict)

    def add(self, hand: SettledHand, staked: int, returned: int) -> None:
        self.hands += 1
        self.handle += staked
        self.returned += returned
        tied = hand.outcome in TIED_OUTCOMES
        if tied:
            self.ties += 1
            if hand.tie_bet:
                self.tie_bets_won += 1
        if hand.outcome in WAR_OUTCOMES:
            self.wars += 1
        surrendered = hand.outcome == Outcome.SURRENDER.value
        if surrendered:
            self.surrenders += 1
        bets = self.bets.get(hand.rules)
        if bets is None:
            bets = self.bets[hand.rules] = [0, 0, 0]
        bets[0] += hand.bet
        if surrendered:
            bets[1] += hand.bet
        bets[2] += hand.tie_bet

    def merge(self, other: "_Group") -> None:
        self.hands += other.hands
        self.handle += other.handle
        self.returned += other.returned
        self.ties += other.ties
        self.wars += other.wars
        self.surrenders += other.surrenders
        self.tie_bets_won += other.tie_bets_won
        for rules, (main, surrendered, tie) in other.bets.items():
            mine = self.bets.setdefault(rules, [0, 0, 0])
            mine[0] += main
            mine[1] += surrendered
            mine[2] += tie

    def theoretical(self, odds: Callable[[str], Odds]) -> Fraction:
        """Expected house win, unbiased whatever the player's strategy on ties.

        Every main bet is rated at the always-war edge; a surrender (which happens only on a
        tie, with probability p_tie) adds (surrender edge - war edge) / p_tie of its bet, so
        that a player who always surrenders is rated at exactly the surrender edge.
        """
        total = Fraction(0)
        for rules, (main, surrendered, tie) in self.bets.items():
            o = odds(rules)
            total += main * o.house_edge_war
            total += surrendered * (o.house_edge_surrender - o.house_edge_war) / o.p_tie
            total += tie * o.house_edge_tie_bet
        return total

    def row(self, key: dict[str, Any], odds: Callable[[str], Odds]) -> dict[str, Any]:
        theoretical = self.theoretical(odds)
        house_win = self.handle - self.returned
        return {
            **key,
            "hands": self.hands,
            "handle": self.handle,
            "returned": self.returned,
            "house_win": house_win,
            "hold": house_win / self.handle if self.handle else None,
            "theoretical_win": round(theoretical),
            "theoretical_hold": float(theoretical / self.handle) if self.handle else None,
            "ties": self.ties,
            "wars": self.wars,
            "surrenders": self.surrenders,
            "tie_bets_won": self.tie_bets_won,
        }


@dataclass(frozen=True, slots=True)
class PayoutReport:
    group_by: GroupBy
    rows: list[dict[str, Any]]
    totals: list[dict[str, Any]]  # one per currency: money in different currencies never adds
    discrepancy_count: int
    discrepancies: list[Discrepancy]

    def as_dict(self) -> dict[str, Any]:
        return {
            "group_by": self.group_by,
            "rows": self.rows,
            "totals": self.totals,
            "discrepancies": {
                "count": self.discrepancy_count,
                "items": [d.as_dict() for d in self.discrepancies],
            },
        }


def aggregate(
    hands: Iterable[SettledHand],
    group_by: GroupBy,
    odds: Callable[[str], Odds] = odds_for_rules,
) -> PayoutReport:
    """Group settled hands; money from the ledger figures, checked against the records."""
    groups: dict[tuple[Any, str], _Group] = {}
    discrepancies: list[Discrepancy] = []
    count = 0
    for hand in hands:
        staked = hand.ledger_staked if hand.ledger_staked is not None else 0
        returned = hand.ledger_returned if hand.ledger_returned is not None else 0
        for name, ledger_value, record_value in (
            ("total_staked", hand.ledger_staked, hand.total_staked),
            ("total_returned", hand.ledger_returned, hand.total_returned),
        ):
            if ledger_value != record_value:
                count += 1
                if len(discrepancies) < MAX_LISTED_DISCREPANCIES:
                    discrepancies.append(
                        Discrepancy(hand.hand_id, name, ledger_value, record_value)
                    )
        if group_by == "day":
            value: Any = hand.day
        elif group_by == "table":
            value = hand.table_id
        else:
            value = hand.player_id
        key = (value, hand.currency)
        group = groups.get(key)
        if group is None:
            group = groups[key] = _Group()
        group.add(hand, staked, returned)

    name = GROUP_KEYS[group_by]
    rows = []
    totals: dict[str, _Group] = {}
    for (value, currency), group in sorted(
        groups.items(), key=lambda item: (item[0][1], item[0][0])
    ):
        shown = value.isoformat() if isinstance(value, date) else value
        rows.append(group.row({name: shown, "currency": currency}, odds))
        totals.setdefault(currency, _Group()).merge(group)
    total_rows = [
        group.row({"currency": currency}, odds) for currency, group in sorted(totals.items())
    ]
    return PayoutReport(group_by, rows, total_rows, count, discrepancies)


def ledger_money(txns: Iterable[LedgerTxn], wallet: str) -> tuple[int | None, int | None]:
    """(staked, returned) per the ledger: stake and raise transfers, and the settlement's
    credit to the wallet (0 on a loss, where nothing returns)."""
    staked: int | None = None
    returned: int | None = None
    for txn in txns:
        if txn.kind in ("stake", "raise"):
            staked = (staked or 0) + txn.moved
        elif txn.kind == "settlement":
            returned = (returned or 0) - txn.amounts.get(wallet, 0)
    return staked, returned


_h = hands_table.c
_COLUMNS = (
    _h.id,
    _h.table_id,
    _h.player_id,
    _h.currency,
    cast(_h.rules, String).label("rules"),
    _h.bet,
    _h.tie_bet,
    _h.raise_amount,
    _h.total_staked,
    _h.total_returned,
    _h.net,
    _h.outcome,
    _h.settled_at,
)


def settled_hands(
    connection: Connection, start: datetime, end: datetime, zone: ZoneInfo, start_hour: int
) -> Iterator[SettledHand]:
    """Hands settled in [start, end), streamed in keyset batches, ledger fetched per batch."""
    codes = AccountCodes(connection)
    base = (
        select(*_COLUMNS)
        .where(
            _h.status == HandStatus.SETTLED.value,
            _h.settled_at >= start,
            _h.settled_at < end,
        )
        .order_by(_h.settled_at, _h.id)
        .limit(BATCH)
    )
    query = base  # keyset on (settled_at, id), served by ix_hands_status_settled_at_id
    while True:
        rows = connection.execute(query).all()
        if not rows:
            return
        ledger = fetch_hand_ledger(connection, [reference(row.id) for row in rows], codes)
        for (
            hand_id,
            table_id,
            player_id,
            currency,
            rules,
            bet,
            tie_bet,
            raise_amount,
            total_staked,
            total_returned,
            net,
            outcome,
            settled_at,
        ) in rows:
            staked, returned = ledger_money(
                ledger.get(reference(hand_id), ()), chart.wallet(str(player_id), currency).code
            )
            yield SettledHand(
                hand_id=hand_id,
                day=gaming_day(settled_at, zone, start_hour),
                table_id=table_id,
                player_id=player_id,
                currency=currency,
                rules=rules,
                bet=bet,
                tie_bet=tie_bet,
                raise_amount=raise_amount,
                total_staked=total_staked,
                total_returned=total_returned if total_returned is not None else 0,
                net=net if net is not None else 0,
                outcome=outcome or "",
                ledger_staked=staked,
                ledger_returned=returned,
            )
        if len(rows) < BATCH:
            return
        last = rows[-1]
        query = base.where(tuple_(_h.settled_at, _h.id) > tuple_(last.settled_at, last.id))


def payout_report(
    session_or_connection: Session | Connection,
    first: date,
    last: date,
    group_by: GroupBy,
    zone: ZoneInfo,
    start_hour: int,
) -> dict[str, Any]:
    """The report for gaming days `first` to `last` inclusive, by the day of settlement."""
    connection = connection_of(session_or_connection)
    start, end = day_bounds(first, last, zone, start_hour)
    report = aggregate(settled_hands(connection, start, end, zone, start_hour), group_by)
    return {
        "from": first.isoformat(),
        "to": last.isoformat(),
        "gaming_day": {
            "timezone": zone.key,
            "start_hour": start_hour,
            "utc_start": start.isoformat(),
            "utc_end": end.isoformat(),
        },
        **report.as_dict(),
    }


CSV_FIELDS: Final = (
    "currency",
    "hands",
    "handle",
    "returned",
    "house_win",
    "hold",
    "theoretical_win",
    "theoretical_hold",
    "ties",
    "wars",
    "surrenders",
    "tie_bets_won",
)


def to_csv(document: dict[str, Any]) -> str:
    """Rows then one `TOTAL` row per currency; ratios as plain decimals, empty when null."""
    key = GROUP_KEYS[document["group_by"]]
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow([key, *CSV_FIELDS])

    def cell(value: Any) -> Any:
        return "" if value is None else value

    for row in document["rows"]:
        writer.writerow([row[key], *(cell(row[f]) for f in CSV_FIELDS)])
    for row in document["totals"]:
        writer.writerow(["TOTAL", *(cell(row[f]) for f in CSV_FIELDS)])
    return out.getvalue()
