"""Hand-replay audit: re-derive every hand from its seeds and check it against its record
and against the ledger.

A hand is replayed with the same engine that dealt it (`casino.hand.play`), from its seed
pair, nonce and the rules recorded with it (never the table's current rules), with the
recorded decision. Everything the record claims (cards, war, outcome, amounts, balances) and
everything the ledger moved for it (stake, raise, settlement: each exactly once, with exactly
the derived amounts) is compared with the derivation. Nothing here writes.

The hot loop reads plain column tuples (Core, not ORM objects), caches what the rules say
per distinct pair of recorded and table rules JSON and seed commitments per seed pair, and
fetches the ledger for a whole batch of hands in two queries, so a long period streams
through in constant memory. `api.domain.audit.parallel` runs it in worker processes, one
id range of the period each.
"""

import json
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from functools import cache
from typing import Any, NamedTuple, TypeVar

from sqlalchemy import (
    ColumnElement,
    Connection,
    Select,
    String,
    and_,
    cast,
    func,
    select,
    type_coerce,
)
from sqlalchemy.orm import Session
from sqlalchemy.types import NullType

from api.db.models import (
    casino_tables_table,
    hands_table,
    seed_pairs_table,
)
from api.db.snapshot import connection_of
from api.domain.hands.ledger import (
    HAND_KINDS,
    AccountCodes,
    LedgerTxn,
    RawTime,
    WalletWindow,
    aware_time,
    fetch_hand_ledger,
    fetch_ledger_of_hands,
    other_wallet_movements,
    reference,
    utc_iso,
)
from casino.errors import GameError, InvalidSeed
from casino.fairness import HandSeeds, server_seed_hash
from casino.hand import Action, Hand, HandStatus, Outcome, play
from casino.rules import TableRules
from ledger import chart
from ledger.chains import follows

BATCH = 2000
DECIDED_BY = ("player", "timeout")

# How far a hand's `created_at` / `settled_at` may be from the `posted_at` of its stake /
# settlement: both are written in the same request, from the same clock.
TIME_TOLERANCE = timedelta(seconds=60)
STATUSES = frozenset(status.value for status in HandStatus)
OUTCOMES = frozenset(outcome.value for outcome in Outcome)
ACTIONS = frozenset(action.value for action in Action)
SETTLED = HandStatus.SETTLED.value
AWAITING_DECISION = HandStatus.AWAITING_DECISION.value
_HAND_KIND_SET = frozenset(HAND_KINDS)

_Query = TypeVar("_Query", bound=Select[*tuple[Any, ...]])  # any SELECT over hands


@dataclass(frozen=True, slots=True)
class Difference:
    """One disagreement: the field, what is recorded (record or ledger), what the replay says."""

    field: str
    recorded: Any
    derived: Any
    transaction_ids: tuple[int, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        body: dict[str, Any] = {
            "field": self.field,
            "recorded": self.recorded,
            "derived": self.derived,
        }
        if self.transaction_ids:
            body["transaction_ids"] = list(self.transaction_ids)
        return body


class HandRow(NamedTuple):
    """The columns a replay reads, in `HAND_COLUMNS` order."""

    id: int
    player_id: int
    table_id: int
    seed_pair_id: int
    nonce: int
    currency: str
    rules: str  # the recorded rules, as JSON text (parsed once per distinct text)
    status: str
    bet: int
    tie_bet: int
    raise_amount: int
    player_card: str
    dealer_card: str
    war_burned: str | None  # JSON text
    war_player_card: str | None
    war_dealer_card: str | None
    decision: str | None
    decided_by: str | None
    outcome: str | None
    total_staked: int
    total_returned: int | None
    net: int | None
    balance_before: int
    balance_after: int | None
    settled_at: RawTime | None  # as the driver returns it: `aware_time` converts it
    created_at: RawTime
    server_seed: str | None  # None: the seed pair row is gone (outer join)
    server_seed_hash: str | None
    client_seed: str | None
    table_rules: str | None  # the table's rules as JSON text; None: the table row is gone


_h = hands_table.c
HAND_COLUMNS = (
    _h.id,
    _h.player_id,
    _h.table_id,
    _h.seed_pair_id,
    _h.nonce,
    _h.currency,
    cast(_h.rules, String).label("rules"),
    _h.status,
    _h.bet,
    _h.tie_bet,
    _h.raise_amount,
    _h.player_card,
    _h.dealer_card,
    cast(_h.war_burned, String).label("war_burned"),
    _h.war_player_card,
    _h.war_dealer_card,
    _h.decision,
    _h.decided_by,
    _h.outcome,
    _h.total_staked,
    _h.total_returned,
    _h.net,
    _h.balance_before,
    _h.balance_after,
    # Raw: converted only where compared (`aware_time`), not by per-row type processing.
    type_coerce(_h.settled_at, NullType()).label("settled_at"),
    type_coerce(_h.created_at, NullType()).label("created_at"),
    seed_pairs_table.c.server_seed,
    seed_pairs_table.c.server_seed_hash,
    seed_pairs_table.c.client_seed,
    cast(casino_tables_table.c.rules, String).label("table_rules"),
)


def hand_query() -> Select[Any]:
    """Outer joins: a hand whose seed pair or table row was deleted is still audited (and
    named), never silently left out."""
    return select(*HAND_COLUMNS).select_from(
        hands_table.outerjoin(seed_pairs_table, seed_pairs_table.c.id == _h.seed_pair_id).outerjoin(
            casino_tables_table, casino_tables_table.c.id == _h.table_id
        )
    )


@dataclass(frozen=True, slots=True)
class RulesVerdict:
    """A hand's recorded rules text read against its table's: worked out once per distinct
    pair of texts (every hand at a table records the same text, so pairs are few)."""

    recorded: TableRules | GameError  # the rules to replay with, or why there are none
    differences: tuple[Difference, ...]  # recorded against the table's, field by field
    wager_rules: TableRules | None  # the table's rules, else the recorded ones, else None


class Replayer:
    """Replays hands, caching what repeats across them: rules and seed commitments."""

    def __init__(self) -> None:
        self._rules: dict[tuple[str, str | None], RulesVerdict] = {}
        self._commitments: dict[int, bool] = {}

    def rules_of(self, row: HandRow) -> RulesVerdict:
        key = (row.rules, row.table_rules)
        found = self._rules.get(key)
        if found is None:
            found = self._rules[key] = _rules_verdict(row.rules, row.table_rules)
        return found

    def commitment_ok(self, row: HandRow) -> bool:
        """SHA-256 of the server seed's raw bytes is the hash shown before play."""
        ok = self._commitments.get(row.seed_pair_id)
        if ok is None:
            try:
                digest = server_seed_hash(row.server_seed) if row.server_seed is not None else ""
            except (InvalidSeed, TypeError, ValueError):
                digest = ""
            ok = self._commitments[row.seed_pair_id] = digest == row.server_seed_hash
        return ok

    def replay(self, row: HandRow) -> Hand:
        """The hand as the engine derives it; raises GameError/ValueError if it cannot."""
        if row.server_seed is None or row.client_seed is None:
            raise GameError(f"seed pair {row.seed_pair_id} does not exist")
        rules = self.rules_of(row).recorded
        if isinstance(rules, GameError):
            # A fresh traceback each time: re-raising the cached error would grow its own.
            raise rules.with_traceback(None)
        action = Action(row.decision) if row.decision is not None else None
        return play(
            rules.game,
            HandSeeds(row.server_seed, row.client_seed, row.nonce),
            row.bet,
            row.tie_bet,
            action,
        )


def _parse_rules(text: str) -> TableRules | GameError:
    try:
        return TableRules.from_dict(json.loads(text))
    except GameError as error:
        return error
    except (ValueError, TypeError) as error:
        return GameError(f"recorded rules are not valid JSON rules: {error}")


def _rules_verdict(recorded: str, table: str | None) -> RulesVerdict:
    """Table rules never change after creation, so every hand at a table records exactly
    them. A wager is held to the table's rules (the recorded ones if the table's cannot be
    read)."""
    mine = _parse_rules(recorded)
    theirs = _parse_rules(table) if table is not None else None
    return RulesVerdict(
        recorded=mine,
        differences=_compare_rules(recorded, table) if table is not None else (),
        wager_rules=next((r for r in (theirs, mine) if isinstance(r, TableRules)), None),
    )


def _json_object(text: str) -> dict[str, Any] | None:
    try:
        loaded = json.loads(text)
    except ValueError:
        return None
    return loaded if isinstance(loaded, dict) else None


def _compare_rules(recorded: str, table: str) -> tuple[Difference, ...]:
    if recorded == table:
        return ()
    mine, theirs = _json_object(recorded), _json_object(table)
    if mine is None or theirs is None:
        return (Difference("rules", recorded, table),) if mine != theirs else ()
    return tuple(
        Difference(f"rules.{name}", mine.get(name), theirs.get(name))
        for name in sorted(mine.keys() | theirs.keys())
        if mine.get(name) != theirs.get(name)
    )


def _check_record_fields(
    row: HandRow, rules: RulesVerdict, add: Callable[[Difference], None]
) -> None:
    """What the record must hold whether or not it can be replayed: a decision the engine
    knows, its table's rules and a wager those rules accept, an existing seed pair."""
    if row.decision is not None and row.decision not in ACTIONS:
        add(Difference("decision", row.decision, " or ".join(sorted(ACTIONS)) + " or null"))
    if row.server_seed is None:
        add(Difference("seed_pair_id", row.seed_pair_id, "no such seed pair"))
    if row.table_rules is None:
        add(Difference("table_id", row.table_id, "no such table"))
    for difference in rules.differences:
        add(difference)
    if rules.wager_rules is not None:
        try:
            rules.wager_rules.check_wager(row.bet, row.tie_bet)
        except GameError as error:
            message = str(error)
            name = "tie_bet" if message.startswith("tie_bet") else "bet"
            add(Difference(name, getattr(row, name), f"refused by the table's rules: {message}"))


def _by_kind(txns: Sequence[LedgerTxn]) -> dict[str, list[LedgerTxn]]:
    """A hand's transactions grouped by kind (seq order kept): read by every ledger check."""
    kinds: dict[str, list[LedgerTxn]] = {}
    for txn in txns:
        same = kinds.get(txn.kind)
        if same is None:
            kinds[txn.kind] = [txn]
        else:
            same.append(txn)
    return kinds


def _check_ledger_witness(
    row: HandRow,
    txns: Sequence[LedgerTxn],
    kinds: dict[str, list[LedgerTxn]],
    add: Callable[[Difference], None],
) -> None:
    """The record against what its ledger transactions say of it (hashed into the chain,
    so these cannot be changed without breaking it): player and table on every posting,
    the stake's and settlement's posting times, the settlement's decision when it has one."""
    player_id, table_id = row.player_id, row.table_id
    for txn in txns:
        meta = txn.meta
        if meta is not None and (
            meta.get("player_id") != player_id or meta.get("table_id") != table_id
        ):
            _name_false_witnesses(row, txns, add)
            break
    _check_time("created_at", row.created_at, kinds.get("stake"), add)
    settlements = kinds.get("settlement")
    _check_time("settled_at", row.settled_at, settlements, add)
    if settlements is not None and len(settlements) == 1 and settlements[0].meta:
        meta = settlements[0].meta
        decided: tuple[tuple[str, str | None], ...] = (
            ("decision", row.decision),
            ("decided_by", row.decided_by),
        )
        for name, decided_value in decided:
            if name in meta and meta[name] != decided_value:
                add(Difference(name, decided_value, meta[name], (settlements[0].id,)))


def _name_false_witnesses(
    row: HandRow, txns: Sequence[LedgerTxn], add: Callable[[Difference], None]
) -> None:
    """Player or table disagree with some posting's metadata: name each, and the postings."""
    for name, value in (("player_id", row.player_id), ("table_id", row.table_id)):
        wrong = [t for t in txns if t.meta is not None and t.meta.get(name) != value]
        if wrong:
            found = [t.meta.get(name) if t.meta is not None else None for t in wrong]
            witnessed = found[0] if all(v == found[0] for v in found) else found
            add(Difference(name, value, witnessed, tuple(t.id for t in wrong)))


def _check_time(
    name: str,
    raw: RawTime | None,
    posted: list[LedgerTxn] | None,
    add: Callable[[Difference], None],
) -> None:
    """A record time against its posting's; a missing or doubled posting is a ledger
    difference of its own."""
    if raw is None or posted is None or len(posted) != 1:
        return
    moment, posted_at = aware_time(raw), posted[0].posted_at
    if posted_at is not None and abs(moment - posted_at) > TIME_TOLERANCE:
        add(Difference(name, utc_iso(moment), utc_iso(posted_at), (posted[0].id,)))


@cache
def _hand_account_codes(player_id: int, currency: str, chain: int) -> tuple[str, str, str]:
    """Wallet, held and house codes of a player's hands, the house's of the chain the hand
    settled on (cached: the audit's hot loop)."""
    key = str(player_id)
    return (
        chart.wallet(key, currency).code,
        chart.held(key, currency).code,
        chart.house(currency, chain).code,
    )


def _war_cards(row: HandRow) -> tuple[list[str] | None, str | None, str | None]:
    burned: list[str] | None = None
    if row.war_burned is not None:
        try:
            loaded = json.loads(row.war_burned)
            burned = loaded if isinstance(loaded, list) else None
        except ValueError:
            burned = [row.war_burned]
    return burned, row.war_player_card, row.war_dealer_card


def check_hand(
    row: HandRow,
    txns: Sequence[LedgerTxn],
    replayer: Replayer,
    other_moves: int = 0,
) -> tuple[Hand | None, list[Difference]]:
    """Compare a hand's record and ledger with its replay; the differences, [] on a match."""
    differences: list[Difference] = []
    add = differences.append
    kinds = _by_kind(txns)
    _check_record_fields(row, replayer.rules_of(row), add)
    _check_ledger_witness(row, txns, kinds, add)
    if row.server_seed is not None and not replayer.commitment_ok(row):
        add(Difference("fairness.server_seed_hash", row.server_seed_hash, "sha256(server_seed)"))
    try:
        hand = replayer.replay(row)
    except (GameError, ValueError) as error:
        add(Difference("replay", "recorded hand", f"cannot be replayed: {error}"))
        # Without a replay to compare with, at least name values no hand can have.
        if row.status not in STATUSES:
            add(Difference("status", row.status, " or ".join(sorted(STATUSES))))
        if row.outcome is not None and row.outcome not in OUTCOMES:
            add(Difference("outcome", row.outcome, "one of " + ", ".join(sorted(OUTCOMES))))
        stakes = kinds.get("stake", [])
        if len(stakes) != 1:  # without a replay, only the stake's presence can be checked
            add(Difference("ledger.stake.count", len(stakes), 1, tuple(t.id for t in stakes)))
        return None, differences
    _check_cards(row, hand, add)
    _check_decision(row, hand, add)
    _check_result(row, hand, kinds, other_moves, add)
    return hand, differences


def _check_cards(row: HandRow, hand: Hand, add: Callable[[Difference], None]) -> None:
    if row.player_card != hand.player_card:
        add(Difference("player_card", row.player_card, hand.player_card))
    if row.dealer_card != hand.dealer_card:
        add(Difference("dealer_card", row.dealer_card, hand.dealer_card))
    burned, war_player, war_dealer = _war_cards(row)
    war = hand.war
    if war is None:
        if burned is not None or war_player is not None or war_dealer is not None:
            add(
                Difference(
                    "war",
                    {"burned": burned, "player_card": war_player, "dealer_card": war_dealer},
                    None,
                )
            )
        return
    if burned != list(war.burned):
        add(Difference("war.burned", burned, list(war.burned)))
    if war_player != war.player_card:
        add(Difference("war.player_card", war_player, war.player_card))
    if war_dealer != war.dealer_card:
        add(Difference("war.dealer_card", war_dealer, war.dealer_card))


def _check_decision(row: HandRow, hand: Hand, add: Callable[[Difference], None]) -> None:
    derived_decision = hand.decision.value if hand.decision is not None else None
    if row.decision != derived_decision:
        add(Difference("decision", row.decision, derived_decision))
    if derived_decision is None:
        if row.decided_by is not None:
            add(Difference("decided_by", row.decided_by, None))
    elif row.decided_by not in DECIDED_BY:
        add(Difference("decided_by", row.decided_by, "player or timeout"))


def _check_result(
    row: HandRow,
    hand: Hand,
    kinds: dict[str, list[LedgerTxn]],
    other_moves: int,
    add: Callable[[Difference], None],
) -> None:
    """Status, outcome, amounts, settlement time and balances against the derived hand, then
    the ledger against the money it derives."""
    # Each derived figure once: the Hand's properties recompute on every access.
    outcome_value = hand.outcome
    settled = outcome_value is not None
    outcome = outcome_value.value if outcome_value is not None else None
    status = SETTLED if settled else AWAITING_DECISION
    raise_amount = hand.raise_amount
    stake = hand.bet + hand.tie_bet
    total_staked = stake + raise_amount
    net = hand.net
    total_returned = None if net is None else total_staked + net
    if row.status != status:
        add(Difference("status", row.status, status))
    if row.outcome != outcome:
        add(Difference("outcome", row.outcome, outcome))
    if row.raise_amount != raise_amount:
        add(Difference("raise", row.raise_amount, raise_amount))
    if row.total_staked != total_staked:
        add(Difference("total_staked", row.total_staked, total_staked))
    if row.total_returned != total_returned:
        add(Difference("total_returned", row.total_returned, total_returned))
    if row.net != net:
        add(Difference("net", row.net, net))
    if settled != (row.settled_at is not None):
        add(
            Difference(
                "settled_at",
                None if row.settled_at is None else utc_iso(aware_time(row.settled_at)),
                "set" if settled else None,
            )
        )
    if not settled:
        if row.balance_after is not None:
            add(Difference("balance_after", row.balance_after, None))
    elif net is not None:
        moved = None if row.balance_after is None else row.balance_after - row.balance_before
        if moved != net + other_moves:
            add(Difference("balance_after - balance_before", moved, net + other_moves))
    _check_ledger(row, kinds, stake, raise_amount, total_returned, add)


def _check_ledger(
    row: HandRow,
    kinds: dict[str, list[LedgerTxn]],
    stake: int,
    raise_amount: int,
    returned: int | None,
    add: Callable[[Difference], None],
) -> None:
    """Exactly one stake, one raise if the derived hand raised, one settlement if it settled,
    each moving exactly the derived amounts (netted per account, zero legs left out); no
    transaction of any other kind."""
    settlements = kinds.get("settlement")
    chain = settlements[0].chain if settlements else 1
    wallet, held, house = _hand_account_codes(row.player_id, row.currency, chain)
    staked = stake + raise_amount
    _check_kind("stake", kinds.get("stake"), {wallet: stake, held: -stake}, add)
    raised = {wallet: raise_amount, held: -raise_amount} if raise_amount else None
    _check_kind("raise", kinds.get("raise"), raised, add)
    settlement = None
    if returned is not None:
        legs = {held: staked, house: returned - staked, wallet: -returned}
        settlement = {code: amount for code, amount in legs.items() if amount}
    _check_kind("settlement", kinds.get("settlement"), settlement, add)
    for kind in sorted(kinds.keys() - _HAND_KIND_SET):
        _check_kind(kind, kinds[kind], None, add)


def _check_kind(
    kind: str,
    found: list[LedgerTxn] | None,
    wanted: dict[str, int] | None,
    add: Callable[[Difference], None],
) -> None:
    """One kind of transaction: how many (one if `wanted`, else none), and its amounts."""
    count = len(found) if found is not None else 0
    expected = 0 if wanted is None else 1
    if count != expected:
        ids = tuple(t.id for t in found) if found is not None else ()
        add(Difference(f"ledger.{kind}.count", count, expected, ids))
    elif found is not None and found[0].amounts != wanted:
        add(Difference(f"ledger.{kind}.entries", found[0].amounts, wanted, (found[0].id,)))


def ledger_window(row: HandRow, txns: Sequence[LedgerTxn]) -> WalletWindow | None:
    """The stake-to-settlement window of a settled hand, when something else can be in it:
    None when the hand's own transactions follow each other link by link in one chain."""
    stakes = [t for t in txns if t.kind == "stake"]
    settlements = [t for t in txns if t.kind == "settlement"]
    if len(stakes) != 1 or len(settlements) != 1:
        return None
    stake, settlement = stakes[0], settlements[0]
    if _links_in_a_row(stake, settlement, txns):
        return None
    return WalletWindow(
        key=row.id,
        wallet=_hand_account_codes(row.player_id, row.currency, settlement.chain)[0],
        after_txn_id=stake.id,
        before_txn_id=settlement.id,
        own_reference=reference(row.id),
    )


def _links_in_a_row(first: LedgerTxn, last: LedgerTxn, txns: Sequence[LedgerTxn]) -> bool:
    """Whether `first`, the hand's transactions between, and `last` are consecutive links
    of one chain: then no other transaction was posted on that chain in between."""
    chain, previous = first.chain, first.seq
    for txn in sorted((t for t in txns if first.seq < t.seq <= last.seq), key=lambda t: t.seq):
        if txn.chain != chain or not follows(chain, previous, txn.seq):
            return False
        previous = txn.seq
    return previous == last.seq


@dataclass(frozen=True, slots=True)
class HandMismatch:
    hand_id: int
    differences: tuple[Difference, ...]

    def as_dict(self) -> dict[str, Any]:
        return {"hand_id": self.hand_id, "differences": [d.as_dict() for d in self.differences]}


@dataclass(slots=True)
class HandAuditResult:
    """The replay of a period: counts, and only the hands that did not match (memory stays
    flat however many hands match)."""

    hands_checked: int = 0
    settled: int = 0
    awaiting_decision: int = 0
    mismatches: list[HandMismatch] = field(default_factory=list)
    seconds: float = 0.0
    jobs: int = 1  # processes that replayed the hands (1: in the calling process)

    @property
    def ok(self) -> bool:
        return not self.mismatches

    def absorb(self, later: "HandAuditResult") -> None:
        """Add the counts and mismatches of a range of hands after this one's, so that
        chunks folded in id order read exactly like one pass over the whole period."""
        self.hands_checked += later.hands_checked
        self.settled += later.settled
        self.awaiting_decision += later.awaiting_decision
        self.mismatches.extend(later.mismatches)

    @property
    def hands_per_second(self) -> float:
        return self.hands_checked / self.seconds if self.seconds > 0 else 0.0

    def as_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "hands_checked": self.hands_checked,
            "settled": self.settled,
            "awaiting_decision": self.awaiting_decision,
            "mismatched": len(self.mismatches),
            "seconds": round(self.seconds, 3),
            "hands_per_second": round(self.hands_per_second),
            "jobs": self.jobs,
            "mismatches": [m.as_dict() for m in self.mismatches],
        }


def _period(start: datetime | None, end: datetime | None) -> list[ColumnElement[bool]]:
    """The conditions selecting hands created in [start, end), either bound optional."""
    conditions = []
    if start is not None:
        conditions.append(_h.created_at >= start)
    if end is not None:
        conditions.append(_h.created_at < end)
    return conditions


def in_range(query: _Query, start: datetime | None, end: datetime | None) -> _Query:
    """The query restricted to hands created in [start, end), either bound optional."""
    return query.where(*_period(start, end))


def count_hands(
    session_or_connection: Session | Connection, start: datetime | None, end: datetime | None
) -> int:
    connection = connection_of(session_or_connection)
    query = in_range(select(func.count()).select_from(hands_table), start, end)
    return int(connection.execute(query).scalar_one())


def _batches(
    connection: Connection,
    start: datetime | None,
    end: datetime | None,
    batch: int,
    after_id: int = 0,
    through_id: int | None = None,
) -> Iterator[list[HandRow]]:
    """Keyset batches by id, within (after_id, through_id]: each a short query, so nothing
    holds a cursor open, and an id range is a parallel worker's share of a period."""
    base = in_range(hand_query(), start, end).order_by(_h.id).limit(batch)
    if through_id is not None:
        base = base.where(_h.id <= through_id)
    make = HandRow._make
    while True:
        rows = [make(row) for row in connection.execute(base.where(_h.id > after_id)).all()]
        if not rows:
            return
        yield rows
        after_id = rows[-1].id
        if len(rows) < batch:
            return


def audit_hands(
    session_or_connection: Session | Connection,
    start: datetime | None = None,
    end: datetime | None = None,
    on_progress: Callable[[int], None] | None = None,
    *,
    batch: int = BATCH,
    after_id: int = 0,
    through_id: int | None = None,
) -> HandAuditResult:
    """Replay every hand created in [start, end) (UTC, either bound optional) and check it
    against its record and its ledger transactions. `on_progress` gets the count so far.

    `after_id` / `through_id` narrow it to the hands with ids in (after_id, through_id]: one
    chunk of `api.domain.audit.parallel`, which splits a period by id range."""
    connection = connection_of(session_or_connection)
    began = time.perf_counter()
    result = HandAuditResult()
    replayer = Replayer()
    codes = AccountCodes(connection)
    for rows in _batches(connection, start, end, batch, after_id, through_id):
        # The batch is every hand of the period with an id from its first to its last.
        batch_hands = and_(_h.id >= rows[0].id, _h.id <= rows[-1].id, *_period(start, end))
        _audit_batch(connection, rows, batch_hands, replayer, codes, result)
        if on_progress is not None:
            on_progress(result.hands_checked)
    result.seconds = time.perf_counter() - began
    return result


def _audit_batch(
    connection: Connection,
    rows: list[HandRow],
    batch_hands: ColumnElement[bool],
    replayer: Replayer,
    codes: AccountCodes,
    result: HandAuditResult,
) -> None:
    """One batch: its ledger (two queries), the wallet windows of its decided hands (a query
    each, where another transaction can lie inside), then every hand's checks."""
    ledger = fetch_ledger_of_hands(connection, batch_hands, codes, details=True)
    no_txns: list[LedgerTxn] = []
    hands = [(row, ledger.get(reference(row.id), no_txns)) for row in rows]
    windows = [
        window
        for row, txns in hands
        if row.decision is not None and (window := ledger_window(row, txns))
    ]
    moves = other_wallet_movements(connection, windows, codes) if windows else {}
    settled = 0
    for row, txns in hands:
        _, differences = check_hand(row, txns, replayer, moves.get(row.id, 0))
        if differences:
            result.mismatches.append(HandMismatch(row.id, tuple(differences)))
        settled += row.status == SETTLED
    result.settled += settled
    result.awaiting_decision += len(rows) - settled
    result.hands_checked += len(rows)


@dataclass(frozen=True, slots=True)
class SingleHandAudit:
    row: HandRow
    derived: Hand | None
    differences: tuple[Difference, ...]
    txns: tuple[LedgerTxn, ...]


def audit_one_hand(
    session_or_connection: Session | Connection, hand_id: int
) -> SingleHandAudit | None:
    """The replay of one hand, with the same checks as the period audit; None if no such hand."""
    connection = connection_of(session_or_connection)
    found = connection.execute(hand_query().where(_h.id == hand_id)).first()
    if found is None:
        return None
    row = HandRow._make(found)
    codes = AccountCodes(connection)
    txns = fetch_hand_ledger(connection, [reference(hand_id)], codes, details=True).get(
        reference(hand_id), []
    )
    window = ledger_window(row, txns) if row.decision is not None else None
    moves = other_wallet_movements(connection, [window], codes) if window else {}
    derived, differences = check_hand(row, txns, Replayer(), moves.get(row.id, 0))
    return SingleHandAudit(row, derived, tuple(differences), tuple(txns))
