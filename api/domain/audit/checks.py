"""Per-hand checks: a hand's record and its ledger transactions against its replay.

Everything the record claims (cards, war, outcome, amounts, balances) and everything the
ledger moved for it (stake, raise, settlement: each exactly once, with exactly the derived
amounts) is compared with the derivation; what needs no replay (player, table, times,
decision, rules, wager) is held to what the ledger's hashed metadata and the table say.
The expected ledger is computed from the derived hand, so a forged record and a forged
ledger row are each caught on their own. Nothing here reads the database.
"""

import json
from collections.abc import Callable, Sequence
from datetime import timedelta
from functools import cache

from api.domain.audit.reads import HandRow
from api.domain.audit.replay import Replayer, RulesVerdict
from api.domain.audit.results import Difference
from api.domain.hands.ledger import (
    HAND_KINDS,
    LedgerTxn,
    RawTime,
    WalletWindow,
    aware_time,
    reference,
    utc_iso,
)
from casino.errors import GameError
from casino.hand import Action, Hand, HandStatus, Outcome
from casino.version import KNOWN_ENGINE_VERSIONS
from ledger import chart
from ledger.chains import follows

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
    _check_engine(row, rules, add)
    if rules.wager_rules is not None:
        try:
            rules.wager_rules.check_wager(row.bet, row.tie_bet)
        except GameError as error:
            message = str(error)
            name = "tie_bet" if message.startswith("tie_bet") else "bet"
            add(Difference(name, getattr(row, name), f"refused by the table's rules: {message}"))


def _check_engine(row: HandRow, rules: RulesVerdict, add: Callable[[Difference], None]) -> None:
    """A recorded game software version this audit knows, and a rules hash that is the hash
    of the rules recorded with the hand. Hands from before versions were recorded have
    neither, and only that pair of NULLs is accepted."""
    if row.engine_version is None:
        if row.rules_hash is not None:
            add(Difference("engine.version", None, "recorded with its rules_hash"))
        return
    if row.engine_version not in KNOWN_ENGINE_VERSIONS:
        known = " or ".join(sorted(KNOWN_ENGINE_VERSIONS))
        add(Difference("engine.version", row.engine_version, known))
    if rules.rules_hash is not None and row.rules_hash != rules.rules_hash:
        add(Difference("engine.rules_hash", row.rules_hash, rules.rules_hash))


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
    _check_actors(row, kinds, add)
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


def _check_actors(
    row: HandRow, kinds: dict[str, list[LedgerTxn]], add: Callable[[Difference], None]
) -> None:
    """The tokens the record names against those hashed into its postings: the stake's is
    the placing token; a decided hand's raise and settlement name the deciding one."""
    deciding = row.decided_by_token if row.decision is not None else row.placed_by_token
    # Named by the decision's text, as reported since actors were recorded: an empty one
    # (which no hand has, and `decision` names) reports the placing token's field.
    deciding_field = "decided_by_token" if row.decision else "placed_by_token"
    for kind, token, name in (
        ("stake", row.placed_by_token, "placed_by_token"),
        ("raise", deciding, "decided_by_token"),
        ("settlement", deciding, deciding_field),
    ):
        for txn in kinds.get(kind, ()):
            meta = txn.meta
            if meta is not None and "actor_token_id" in meta and meta["actor_token_id"] != token:
                add(Difference(name, token, meta["actor_token_id"], (txn.id,)))


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
    # The subset test builds nothing; the difference would build a set for every hand.
    if not kinds.keys() <= _HAND_KIND_SET:
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
