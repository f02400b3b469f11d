"""Hand-replay audit: re-derive every hand from its seeds and check it against its record
and against the ledger.

A hand is replayed with the same engine that dealt it (`casino.hand.play`), from its seed
pair, nonce and the rules recorded with it (never the table's current rules), with the
recorded decision. Everything the record claims (cards, war, outcome, amounts, balances) and
everything the ledger moved for it (stake, raise, settlement: each exactly once, with exactly
the derived amounts) is compared with the derivation. Nothing here writes.

The hot loop reads plain column tuples (Core, not ORM objects), caches parsed rules per
distinct rules JSON and seed commitments per seed pair, and fetches the ledger for a whole
batch of hands in one query, so a long period streams through in constant memory.
"""

import json
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from functools import cache
from typing import Any, NamedTuple

from sqlalchemy import Connection, Engine, Select, String, cast, func, select
from sqlalchemy.orm import Session

from api.db.models import CasinoTable, HandRecord, SeedPair
from api.services.hand_ledger import (
    HAND_KINDS,
    AccountCodes,
    LedgerTxn,
    WalletWindow,
    fetch_hand_ledger,
    other_wallet_movements,
    reference,
)
from casino.errors import GameError, InvalidSeed
from casino.fairness import HandSeeds, server_seed_hash
from casino.hand import Action, Hand, HandStatus, Outcome, play
from casino.rules import TableRules
from ledger import chart

BATCH = 2000
DECIDED_BY = ("player", "timeout")

# How far a hand's `created_at` / `settled_at` may be from the `posted_at` of its stake /
# settlement: both are written in the same request, from the same clock.
TIME_TOLERANCE = timedelta(seconds=60)
STATUSES = frozenset(status.value for status in HandStatus)
OUTCOMES = frozenset(outcome.value for outcome in Outcome)
ACTIONS = frozenset(action.value for action in Action)

hands_table = HandRecord.__table__
pairs_table = SeedPair.__table__
tables_table = CasinoTable.__table__


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
    settled_at: datetime | None
    created_at: datetime
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
    _h.settled_at,
    _h.created_at,
    pairs_table.c.server_seed,
    pairs_table.c.server_seed_hash,
    pairs_table.c.client_seed,
    cast(tables_table.c.rules, String).label("table_rules"),
)


def hand_query() -> Select[Any]:
    """Outer joins: a hand whose seed pair or table row was deleted is still audited (and
    named), never silently left out."""
    return select(*HAND_COLUMNS).select_from(
        hands_table.outerjoin(pairs_table, pairs_table.c.id == _h.seed_pair_id).outerjoin(
            tables_table, tables_table.c.id == _h.table_id
        )
    )


class Replayer:
    """Replays hands, caching what repeats across them: rules and seed commitments."""

    def __init__(self) -> None:
        self._rules: dict[str, TableRules | GameError] = {}
        self._commitments: dict[int, bool] = {}
        self._rule_differences: dict[tuple[str, str], tuple[Difference, ...]] = {}

    def rules(self, text: str) -> TableRules:
        found = self._rules.get(text)
        if found is None:
            try:
                found = TableRules.from_dict(json.loads(text))
            except GameError as error:
                found = error
            except (ValueError, TypeError) as error:
                found = GameError(f"recorded rules are not valid JSON rules: {error}")
            self._rules[text] = found
        if isinstance(found, GameError):
            raise found
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

    def rule_differences(self, recorded: str, table: str) -> tuple[Difference, ...]:
        """The recorded rules against the table's, field by field (table rules never change
        after creation, so every hand at a table records exactly them). Cached per pair."""
        key = (recorded, table)
        found = self._rule_differences.get(key)
        if found is None:
            found = self._rule_differences[key] = _compare_rules(recorded, table)
        return found

    def wager_difference(self, row: HandRow) -> Difference | None:
        """The recorded wager, refused by the table's rules (the recorded ones if the table's
        cannot be read)? Named `bet` or `tie_bet`."""
        rules: TableRules | None = None
        for text in (row.table_rules, row.rules):
            if text is None:
                continue
            try:
                rules = self.rules(text)
                break
            except GameError:
                continue
        if rules is None:
            return None
        try:
            rules.check_wager(row.bet, row.tie_bet)
        except GameError as error:
            message = str(error)
            name = "tie_bet" if message.startswith("tie_bet") else "bet"
            return Difference(name, getattr(row, name), f"refused by the table's rules: {message}")
        return None

    def replay(self, row: HandRow) -> Hand:
        """The hand as the engine derives it; raises GameError/ValueError if it cannot."""
        if row.server_seed is None or row.client_seed is None:
            raise GameError(f"seed pair {row.seed_pair_id} does not exist")
        rules = self.rules(row.rules)
        action = Action(row.decision) if row.decision is not None else None
        return play(
            rules.game,
            HandSeeds(row.server_seed, row.client_seed, row.nonce),
            row.bet,
            row.tie_bet,
            action,
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


def _utc(moment: datetime) -> datetime:
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def _check_record_fields(
    row: HandRow, replayer: Replayer, add: Callable[[Difference], None]
) -> None:
    """What the record must hold whether or not it can be replayed: a decision the engine
    knows, its table's rules and a wager those rules accept, an existing seed pair."""
    if row.decision is not None and row.decision not in ACTIONS:
        add(Difference("decision", row.decision, " or ".join(sorted(ACTIONS)) + " or null"))
    if row.server_seed is None:
        add(Difference("seed_pair_id", row.seed_pair_id, "no such seed pair"))
    if row.table_rules is None:
        add(Difference("table_id", row.table_id, "no such table"))
    else:
        for difference in replayer.rule_differences(row.rules, row.table_rules):
            add(difference)
    wager = replayer.wager_difference(row)
    if wager is not None:
        add(wager)


def _check_ledger_witness(
    row: HandRow, txns: Sequence[LedgerTxn], add: Callable[[Difference], None]
) -> None:
    """The record against what its ledger transactions say of it (hashed into the chain,
    so these cannot be changed without breaking it): player and table on every posting,
    the stake's and settlement's posting times, the settlement's decision when it has one."""
    for name, value in (("player_id", row.player_id), ("table_id", row.table_id)):
        wrong = [t for t in txns if t.meta is not None and t.meta.get(name) != value]
        if wrong:
            found = [t.meta.get(name) if t.meta is not None else None for t in wrong]
            witnessed = found[0] if all(v == found[0] for v in found) else found
            add(Difference(name, value, witnessed, tuple(t.id for t in wrong)))
    stakes = [t for t in txns if t.kind == "stake"]
    settlements = [t for t in txns if t.kind == "settlement"]
    for name, moment, posted in (
        ("created_at", row.created_at, stakes),
        ("settled_at", row.settled_at, settlements),
    ):
        if len(posted) != 1 or moment is None:
            continue  # a missing or doubled posting is a ledger difference of its own
        posted_at = posted[0].posted_at
        if posted_at is not None and abs(_utc(moment) - _utc(posted_at)) > TIME_TOLERANCE:
            add(Difference(name, moment.isoformat(), posted_at.isoformat(), (posted[0].id,)))
    if len(settlements) == 1 and settlements[0].meta:
        meta = settlements[0].meta
        decided: tuple[tuple[str, str | None], ...] = (
            ("decision", row.decision),
            ("decided_by", row.decided_by),
        )
        for name, decided_value in decided:
            if name in meta and meta[name] != decided_value:
                add(Difference(name, decided_value, meta[name], (settlements[0].id,)))


@cache
def _hand_account_codes(player_id: int, currency: str) -> tuple[str, str, str]:
    """Wallet, held and house codes of a player's hands (cached: the audit's hot loop)."""
    key = str(player_id)
    return (
        chart.wallet(key, currency).code,
        chart.held(key, currency).code,
        chart.house(currency).code,
    )


def _expected(
    stake: int,
    raise_amount: int,
    staked: int,
    returned: int | None,
    player_id: int,
    currency: str,
) -> dict[str, list[dict[str, int]]]:
    wallet, held, house = _hand_account_codes(player_id, currency)
    expected: dict[str, list[dict[str, int]]] = {
        "stake": [{wallet: stake, held: -stake}],
        "raise": [{wallet: raise_amount, held: -raise_amount}] if raise_amount else [],
        "settlement": [],
    }
    if returned is not None:
        settlement = {held: staked, house: returned - staked, wallet: -returned}
        expected["settlement"] = [{code: amount for code, amount in settlement.items() if amount}]
    return expected


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
    _check_record_fields(row, replayer, add)
    _check_ledger_witness(row, txns, add)
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
        _check_ledger_counts_only(txns, add)
        return None, differences

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
    else:
        if burned != list(war.burned):
            add(Difference("war.burned", burned, list(war.burned)))
        if war_player != war.player_card:
            add(Difference("war.player_card", war_player, war.player_card))
        if war_dealer != war.dealer_card:
            add(Difference("war.dealer_card", war_dealer, war.dealer_card))
    derived_decision = hand.decision.value if hand.decision is not None else None
    if row.decision != derived_decision:
        add(Difference("decision", row.decision, derived_decision))
    if derived_decision is None:
        if row.decided_by is not None:
            add(Difference("decided_by", row.decided_by, None))
    elif row.decided_by not in DECIDED_BY:
        add(Difference("decided_by", row.decided_by, "player or timeout"))
    # Each derived figure once: the Hand's properties recompute on every access.
    outcome_value = hand.outcome
    settled = outcome_value is not None
    outcome = outcome_value.value if outcome_value is not None else None
    status = HandStatus.SETTLED.value if settled else HandStatus.AWAITING_DECISION.value
    raise_amount = hand.raise_amount
    total_staked = hand.bet + hand.tie_bet + raise_amount
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
                row.settled_at and row.settled_at.isoformat(),
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

    _check_ledger(
        _expected(
            hand.bet + hand.tie_bet,
            raise_amount,
            total_staked,
            total_returned,
            row.player_id,
            row.currency,
        ),
        txns,
        add,
    )
    return hand, differences


def _check_ledger(
    expected: dict[str, list[dict[str, int]]],
    txns: Sequence[LedgerTxn],
    add: Callable[[Difference], None],
) -> None:
    actual: dict[str, list[LedgerTxn]] = {}
    for txn in txns:
        actual.setdefault(txn.kind, []).append(txn)
    for kind in (*HAND_KINDS, *sorted(set(actual) - set(HAND_KINDS))):
        wanted = expected.get(kind, [])
        found = actual.get(kind, [])
        ids = tuple(t.id for t in found)
        if len(found) != len(wanted):
            add(Difference(f"ledger.{kind}.count", len(found), len(wanted), ids))
        elif wanted and found[0].amounts != wanted[0]:
            add(Difference(f"ledger.{kind}.entries", found[0].amounts, wanted[0], ids))


def _check_ledger_counts_only(txns: Sequence[LedgerTxn], add: Callable[[Difference], None]) -> None:
    """Without a replay only the stake's presence can be checked (exactly one)."""
    kinds = [t.kind for t in txns]
    if kinds.count("stake") != 1:
        add(
            Difference(
                "ledger.stake.count",
                kinds.count("stake"),
                1,
                tuple(t.id for t in txns if t.kind == "stake"),
            )
        )


def ledger_window(row: HandRow, txns: Sequence[LedgerTxn]) -> WalletWindow | None:
    """The stake-to-settlement window of a settled hand, when something else can be in it:
    None when the chain positions between stake and settlement are all the hand's own."""
    stakes = [t for t in txns if t.kind == "stake"]
    settlements = [t for t in txns if t.kind == "settlement"]
    if len(stakes) != 1 or len(settlements) != 1:
        return None
    stake, settlement = stakes[0], settlements[0]
    own_between = sum(1 for t in txns if stake.seq < t.seq < settlement.seq)
    if settlement.seq - stake.seq - 1 <= own_between:
        return None
    return WalletWindow(
        key=row.id,
        wallet=_hand_account_codes(row.player_id, row.currency)[0],
        after_txn_id=stake.id,
        before_txn_id=settlement.id,
        own_reference=reference(row.id),
    )


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

    @property
    def ok(self) -> bool:
        return not self.mismatches

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
            "mismatches": [m.as_dict() for m in self.mismatches],
        }


def connection_of(session_or_connection: Session | Connection) -> Connection:
    if isinstance(session_or_connection, Session):
        return session_or_connection.connection()
    return session_or_connection


def _in_range(query: Select[Any], start: datetime | None, end: datetime | None) -> Select[Any]:
    if start is not None:
        query = query.where(_h.created_at >= start)
    if end is not None:
        query = query.where(_h.created_at < end)
    return query


def count_hands(
    session_or_connection: Session | Connection, start: datetime | None, end: datetime | None
) -> int:
    connection = connection_of(session_or_connection)
    query = _in_range(select(func.count()).select_from(hands_table), start, end)
    return int(connection.execute(query).scalar_one())


def _batches(
    connection: Connection, start: datetime | None, end: datetime | None, batch: int
) -> Iterator[list[HandRow]]:
    """Keyset batches by id: each a short query, so nothing holds a cursor open."""
    after = 0
    base = _in_range(hand_query(), start, end).order_by(_h.id).limit(batch)
    make = HandRow._make
    while True:
        rows = [make(row) for row in connection.execute(base.where(_h.id > after)).all()]
        if not rows:
            return
        yield rows
        after = rows[-1].id
        if len(rows) < batch:
            return


def audit_hands(
    session_or_connection: Session | Connection,
    start: datetime | None = None,
    end: datetime | None = None,
    on_progress: Callable[[int], None] | None = None,
    *,
    batch: int = BATCH,
) -> HandAuditResult:
    """Replay every hand created in [start, end) (UTC, either bound optional) and check it
    against its record and its ledger transactions. `on_progress` gets the count so far."""
    connection = connection_of(session_or_connection)
    began = time.perf_counter()
    result = HandAuditResult()
    replayer = Replayer()
    codes = AccountCodes(connection)
    for rows in _batches(connection, start, end, batch):
        ledger = fetch_hand_ledger(
            connection, [reference(row.id) for row in rows], codes, details=True
        )
        no_txns: list[LedgerTxn] = []
        windows = [
            window
            for row in rows
            if row.decision is not None
            and (window := ledger_window(row, ledger.get(reference(row.id), no_txns)))
        ]
        moves = other_wallet_movements(connection, windows, codes) if windows else {}
        for row in rows:
            _, differences = check_hand(
                row, ledger.get(reference(row.id), no_txns), replayer, moves.get(row.id, 0)
            )
            if differences:
                result.mismatches.append(HandMismatch(row.id, tuple(differences)))
            if row.status == HandStatus.SETTLED.value:
                result.settled += 1
            else:
                result.awaiting_decision += 1
        result.hands_checked += len(rows)
        if on_progress is not None:
            on_progress(result.hands_checked)
    result.seconds = time.perf_counter() - began
    return result


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


@contextmanager
def read_snapshot(engine: Engine) -> Iterator[Connection]:
    """A read-only connection that sees one consistent state of the whole database.

    PostgreSQL: REPEATABLE READ, so hands and ledger rows read minutes apart still agree.
    SQLite: a DEFERRED transaction (WAL gives it a snapshot) rather than the engine's
    default BEGIN IMMEDIATE, so a long audit never holds the write lock.
    """
    with engine.connect() as connection:
        if engine.dialect.name == "postgresql":
            connection = connection.execution_options(isolation_level="REPEATABLE READ")
        else:
            connection = connection.execution_options(sqlite_begin="DEFERRED")
        with connection.begin() as transaction:
            try:
                yield connection
            finally:
                transaction.rollback()
