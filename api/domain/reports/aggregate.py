"""The payout report's arithmetic: settled hands in, rows, totals and discrepancies out.

A pure function over immutable `SettledHand` values, testable without a database. Money is
the ledger's; each hand's ledger figures are checked against its record, and every
disagreement counted (the first `MAX_LISTED_DISCREPANCIES` listed).
"""

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import date
from typing import Any, Final

from api.domain.reports.results import (
    GROUP_COLUMNS,
    Discrepancies,
    Discrepancy,
    GroupBy,
    PayoutRow,
)
from api.domain.reports.spread import hold_spread
from api.domain.reports.theoretical import (
    BetsByRules,
    add_bets,
    add_hand,
    odds_for_rules,
    theoretical_win,
    variance_for_rules,
    win_variance_of,
)
from casino.hand import Outcome
from casino.odds import Odds

MAX_LISTED_DISCREPANCIES: Final = 1000
WAR_OUTCOMES: Final = frozenset(
    {Outcome.WAR_WIN.value, Outcome.WAR_TIE.value, Outcome.WAR_LOSS.value}
)
TIED_OUTCOMES: Final = WAR_OUTCOMES | {Outcome.SURRENDER.value}
SURRENDER: Final = Outcome.SURRENDER.value


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
class Payouts:
    """Rows sorted by currency then group, one total per currency, and the disagreements."""

    rows: tuple[PayoutRow, ...]
    totals: tuple[PayoutRow, ...]
    discrepancies: Discrepancies


@dataclass(slots=True)
class _Group:
    """Running sums over one group's hands (local to `aggregate`, hence mutable)."""

    hands: int = 0
    handle: int = 0
    returned: int = 0
    ties: int = 0
    wars: int = 0
    surrenders: int = 0
    tie_bets_won: int = 0
    bets: BetsByRules = field(default_factory=dict)

    def add(self, hand: SettledHand, staked: int, returned: int) -> None:
        self.hands += 1
        self.handle += staked
        self.returned += returned
        if hand.outcome in TIED_OUTCOMES:
            self.ties += 1
            if hand.tie_bet:
                self.tie_bets_won += 1
        if hand.outcome in WAR_OUTCOMES:
            self.wars += 1
        surrendered = hand.outcome == SURRENDER
        if surrendered:
            self.surrenders += 1
        add_hand(self.bets, hand.rules, hand.bet, hand.tie_bet, surrendered=surrendered)

    def merge(self, other: "_Group") -> None:
        self.hands += other.hands
        self.handle += other.handle
        self.returned += other.returned
        self.ties += other.ties
        self.wars += other.wars
        self.surrenders += other.surrenders
        self.tie_bets_won += other.tie_bets_won
        add_bets(self.bets, other.bets)

    def row(self, currency: str, odds: Callable[[str], Odds], **group: Any) -> PayoutRow:
        """The group's row; `group` names its one key (day, table_id or player_id), if any."""
        theoretical = theoretical_win(self.bets, odds)
        house_win = self.handle - self.returned
        spread = hold_spread(
            self.handle, house_win, theoretical, win_variance_of(self.bets, variance_for_rules)
        )
        return PayoutRow(
            currency=currency,
            hands=self.hands,
            handle=self.handle,
            returned=self.returned,
            house_win=house_win,
            hold=house_win / self.handle if self.handle else None,
            theoretical_win=round(theoretical),
            theoretical_hold=float(theoretical / self.handle) if self.handle else None,
            ties=self.ties,
            wars=self.wars,
            surrenders=self.surrenders,
            tie_bets_won=self.tie_bets_won,
            hold_std_error=spread.std_error if spread else None,
            hold_interval_low=spread.low if spread else None,
            hold_interval_high=spread.high if spread else None,
            outside_interval=spread.outside if spread else None,
            **group,
        )


def disagreements(hand: SettledHand) -> Iterator[Discrepancy]:
    """Where the hand's ledger figures differ from its record (a missing one differs)."""
    if hand.ledger_staked != hand.total_staked:
        yield Discrepancy(hand.hand_id, "total_staked", hand.ledger_staked, hand.total_staked)
    if hand.ledger_returned != hand.total_returned:
        yield Discrepancy(hand.hand_id, "total_returned", hand.ledger_returned, hand.total_returned)


def group_value(hand: SettledHand, group_by: GroupBy) -> date | int:
    """The group a hand falls in: its gaming day, table or player."""
    if group_by == "day":
        return hand.day
    if group_by == "table":
        return hand.table_id
    return hand.player_id


def aggregate(
    hands: Iterable[SettledHand],
    group_by: GroupBy,
    odds: Callable[[str], Odds] = odds_for_rules,
) -> Payouts:
    """Group settled hands; money from the ledger figures, checked against the records."""
    groups: dict[tuple[date | int, str], _Group] = {}
    listed: list[Discrepancy] = []
    count = 0
    for hand in hands:
        for discrepancy in disagreements(hand):
            count += 1
            if len(listed) < MAX_LISTED_DISCREPANCIES:
                listed.append(discrepancy)
        key = (group_value(hand, group_by), hand.currency)
        group = groups.get(key)
        if group is None:
            group = groups[key] = _Group()
        group.add(hand, hand.ledger_staked or 0, hand.ledger_returned or 0)
    rows, totals = _rows_and_totals(groups, GROUP_COLUMNS[group_by], odds)
    return Payouts(rows, totals, Discrepancies(count, tuple(listed)))


def _rows_and_totals(
    groups: dict[tuple[date | int, str], _Group], column: str, odds: Callable[[str], Odds]
) -> tuple[tuple[PayoutRow, ...], tuple[PayoutRow, ...]]:
    """Rows by currency then group value; one total per currency, in currency order."""
    rows = []
    totals: dict[str, _Group] = {}
    for (value, currency), group in sorted(groups.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        rows.append(group.row(currency, odds, **{column: value}))
        totals.setdefault(currency, _Group()).merge(group)
    return tuple(rows), tuple(
        group.row(currency, odds) for currency, group in sorted(totals.items())
    )
