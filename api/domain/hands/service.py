"""Hands: the request path where `casino/` decides and `ledger/` records the money.

Every refusal (an unknown or closed table, a wager the table does not take, a wallet that
does not cover it, a hand that is not awaiting a decision) is decided before the first
write, so a refused request leaves nothing behind and needs no savepoint. Placing and
deciding run their statements on the driver (`store`, `ledger.fresh`): one read that
locks and checks, then one statement per kind of write.
"""

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

import msgspec
from sqlalchemy import ColumnElement, select
from sqlalchemy.orm import Session

from api.db.memo import Memo, memo
from api.db.models import HandRecord, SeedPair
from api.domain.hands import postings, store
from api.domain.hands.decisions import DecidedBy
from api.domain.hands.details import Fairness, HandDetails, WarCards, engine_of, hand_details
from api.domain.hands.postings import HandAccounts, HandRef
from api.domain.players.turn import ReadAfterLock, lock_player_on, refuse_unfinished
from api.domain.protection import checks as protection
from api.domain.protection.policy import ProtectionPolicy
from api.domain.tables import service as tables
from api.errors import NotFound, Refused
from api.pagination import Page, decode_cursor, next_cursor
from casino.errors import GameError
from casino.fairness import HandSeeds
from casino.hand import Action, Hand, HandStatus, deal, decide, play
from casino.rules import TableRules
from casino.version import ENGINE_VERSION, rules_hash
from ledger.batch import INT64_MAX
from ledger.driver import Driver, driver_of
from ledger.errors import LimitExceeded
from ledger.fresh import AccountRow, lock_ahead, read_balance

DEFAULT_POLICY = ProtectionPolicy()
NEW_HAND = 0  # the id of a hand not yet inserted: the database gives it its own


def _settled_fields(hand: Hand, wallet_before_settlement: int) -> dict[str, Any]:
    """The columns settlement fills in (all None while the hand awaits a decision); refuses
    a win the wallet could not hold, before the hand's row is written with it."""
    if hand.total_returned is None or hand.outcome is None:
        return dict.fromkeys(("outcome", "total_returned", "net", "balance_after", "settled_at"))
    balance_after = wallet_before_settlement + hand.total_returned
    if balance_after > INT64_MAX:
        raise Refused("amount_too_large", "the wallet would leave the range the ledger can hold")
    return {
        "outcome": hand.outcome.value,
        "total_returned": hand.total_returned,
        "net": hand.net,
        "balance_after": balance_after,
        "settled_at": datetime.now(UTC),
    }


def _new_record(
    placing: HandRef,
    found: store.Opening,
    rules: TableRules,
    hand: Hand,
    created_at: datetime,
) -> dict[str, Any]:
    """The hand's row as it is written: its seeds, rules, cards, money and who asked."""
    return {
        "player_id": placing.player_id,
        "table_id": placing.table_id,
        "seed_pair_id": found.pair_id,
        "nonce": found.nonce,
        "currency": rules.currency,
        "rules": rules.as_dict(),
        "status": hand.status.value,
        "bet": hand.bet,
        "tie_bet": hand.tie_bet,
        "player_card": hand.player_card,
        "dealer_card": hand.dealer_card,
        "total_staked": hand.total_staked,
        "balance_before": found.wallet_balance,
        "created_at": created_at,
        "engine_version": ENGINE_VERSION,
        "rules_hash": rules_hash(rules),
        "placed_by_token": placing.actor_token_id,
        **_settled_fields(hand, found.wallet_balance - hand.total_staked),
    }


def open_hand(
    session: Session,
    player_id: int,
    table_id: int,
    bet: int,
    tie_bet: int,
    currency: str | None = None,
    *,
    policy: ProtectionPolicy = DEFAULT_POLICY,
    actor_token_id: int | None = None,
) -> HandDetails:
    """Deal a hand: every refusal (a protected player's too) is decided before any write."""
    driver = driver_of(session)
    known = memo(session)
    protected = lock_player_on(driver, player_id)
    rules, accounts = _table_and_accounts(driver, known, player_id, table_id)
    found = store.opening(driver, player_id, table_id, accounts)
    refuse_unfinished(found.unfinished_hand)
    if rules is None or accounts is None or found.table_open is None:
        raise NotFound("table")
    tables.require_open(table_id, found.table_open)
    _refuse_wager(table_id, rules, bet, tie_bet, currency)
    if protected:
        protection.refuse_new_hand(session, player_id, rules.currency, bet, tie_bet, policy)
    seeds = HandSeeds(found.server_seed, found.client_seed, found.nonce)
    hand = deal(rules.game, seeds, bet, tie_bet)
    if found.wallet_balance < hand.total_staked:
        raise LimitExceeded(accounts.wallet.code)

    rows = known.accounts.opening(session, driver, accounts.specs())
    placing = HandRef(NEW_HAND, player_id, table_id, actor_token_id)
    hand_id, record = write_new_hand(driver, placing, found, rules, hand, accounts, rows)
    fairness = Fairness(found.server_seed_hash, found.client_seed, found.nonce, None)
    return _details(hand_id, record, hand, fairness, decided_by=None)


def opening_after_lock(
    session: Session, player_id: int, table_id: int, wager: tuple[int, int, str | None]
) -> ReadAfterLock | None:
    """PostgreSQL: `open_hand`'s opening read, for the statement that locks the player's row
    to run (`api.http.idempotency.PlayersTurn`). The table's rules, which name the wallet
    read, never change, so reading them before the lock (once a process) is as good as
    after. The read takes the ledger's locks only for a `wager` (bet, tie bet, currency)
    the table takes: a wager refused holds nothing another player's hand waits for."""
    driver = driver_of(session)
    rules, accounts = _table_and_accounts(driver, memo(session), player_id, table_id)
    bet, tie_bet, currency = wager
    stake = bet + tie_bet if rules and _takes(table_id, rules, bet, tie_bet, currency) else None
    return store.opening_after_lock(driver, player_id, table_id, accounts, stake)


def _takes(table_id: int, rules: TableRules, bet: int, tie_bet: int, currency: str | None) -> bool:
    """Whether `open_hand`'s wager checks, which need nothing read, would let it go on."""
    try:
        _refuse_wager(table_id, rules, bet, tie_bet, currency)
    except (Refused, GameError):
        return False
    return True


def _refuse_wager(
    table_id: int, rules: TableRules, bet: int, tie_bet: int, currency: str | None
) -> None:
    if currency is not None and currency != rules.currency:
        raise Refused(
            "currency_mismatch", f"table {table_id} plays in {rules.currency}, not {currency}"
        )
    rules.check_wager(bet, tie_bet)


def _table_and_accounts(
    driver: Driver, known: Memo, player_id: int, table_id: int
) -> tuple[TableRules | None, HandAccounts | None]:
    """The table's rules and the accounts a hand there moves; neither for a table that does
    not exist."""
    rules = _table_rules(driver, known, table_id)
    return rules, HandAccounts.of(player_id, rules.currency) if rules is not None else None


def write_new_hand(
    driver: Driver,
    placing: HandRef,
    found: store.Opening,
    rules: TableRules,
    hand: Hand,
    accounts: HandAccounts,
    rows: Mapping[str, AccountRow],
) -> tuple[int, dict[str, Any]]:
    """A dealt hand's writes: its row, the pair's nonce, and its stake (and settlement, when
    the deal settles it) on the ledger. The one refusal left, a win the wallet could not
    hold (`amount_too_large`), is raised before the first of them."""
    created_at = datetime.now(UTC)
    record = _new_record(placing, found, rules, hand, created_at)
    hand_id = store.insert_hand(driver, record, found.drawn_hand_id)
    ref = msgspec.structs.replace(placing, hand_id=hand_id)
    steps = [postings.stake(ref, hand, accounts)]
    if hand.status is HandStatus.SETTLED:
        steps.append(postings.settlement(ref, hand, accounts))
    postings.post(driver, accounts, rows, steps, posted_at=created_at, locked=found.locked)
    return hand_id, record


def decide_hand(
    session: Session,
    hand_id: int,
    action: Action,
    *,
    player_id: int | None,
    decided_by: DecidedBy = "player",
    actor_token_id: int | None = None,
) -> HandDetails:
    """Apply a decision; `player_id` None is the house resolving an abandoned tie.

    The engine refuses a hand that is not awaiting a decision, and a surrender the table
    does not allow; the wallet is checked for the raise; all before anything is written.
    """
    driver = driver_of(session)
    found = _deciding(driver, hand_id, player_id)
    seeds = HandSeeds(found.server_seed, found.client_seed, found.nonce)
    recorded = Action(found.decision) if found.decision is not None else None
    hand = decide(play(found.rules.game, seeds, found.bet, found.tie_bet, recorded), action)
    accounts = HandAccounts.of(found.player_id, found.currency)
    rows = memo(session).accounts.opening(session, driver, accounts.specs())
    # Deposits may have come in while the hand waited: the balance is read as it is locked.
    ids = 2 if action is Action.WAR else 1  # the settlement's, and a war's raise's
    locked = lock_ahead(driver, accounts.chain, list(rows), ids=ids)
    wallet_code = accounts.wallet.code
    wallet = locked.balances[wallet_code] if locked else read_balance(driver, wallet_code)
    if wallet < hand.raise_amount:
        raise LimitExceeded(wallet_code)
    ref = HandRef(hand_id, found.player_id, found.table_id, actor_token_id)
    steps = [postings.settlement(ref, hand, accounts, decided_by)]
    if action is Action.WAR:
        steps.insert(0, postings.raise_for_war(ref, hand, accounts))
    decided = decided_record(hand, action, decided_by, actor_token_id, wallet)
    postings.post(driver, accounts, rows, steps, posted_at=decided["settled_at"], locked=locked)
    store.settle_hand(driver, hand_id, decided)
    seed = found.server_seed if found.revealed else None
    fairness = Fairness(found.server_seed_hash, found.client_seed, found.nonce, seed)
    record = {**_recorded(found), **decided}
    return _details(hand_id, record, hand, fairness, decided_by=decided_by)


def decided_record(
    hand: Hand,
    action: Action,
    decided_by: DecidedBy,
    actor_token_id: int | None,
    wallet_before_raise: int,
) -> dict[str, Any]:
    """The columns a decision fills in; refuses a win the wallet could not hold, before
    anything is written."""
    war = hand.war
    return {
        "decision": action.value,
        "decided_by": decided_by,
        "decided_by_token": actor_token_id,
        "raise_amount": hand.raise_amount,
        "total_staked": hand.total_staked,
        "war_burned": list(war.burned) if war else None,
        "war_player_card": war.player_card if war else None,
        "war_dealer_card": war.dealer_card if war else None,
        "status": hand.status.value,
        **_settled_fields(hand, wallet_before_raise - hand.raise_amount),
    }


def _deciding(driver: Driver, hand_id: int, player_id: int | None) -> store.Deciding:
    """The hand with its player locked; another player's hand is "not found", never
    "forbidden", so that ids cannot be probed."""
    owner = player_id if player_id is not None else store.hand_player(driver, hand_id)
    if owner is None:
        raise NotFound("hand")
    lock_player_on(driver, owner)
    found = store.deciding(driver, hand_id)
    if found is None or found.player_id != owner:
        raise NotFound("hand")
    return found


def _table_rules(driver: Driver, known: Memo, table_id: int) -> TableRules | None:
    """A table's rules, read once: they never change after its creation."""
    rules = known.table_rules.get(table_id)
    if rules is None:
        rules = store.table_rules(driver, table_id)
        if rules is not None:
            known.table_rules[table_id] = rules
    return rules


def _recorded(found: store.Deciding) -> dict[str, Any]:
    return {
        "player_id": found.player_id,
        "table_id": found.table_id,
        "currency": found.currency,
        "rules": found.rules.as_dict(),
        "bet": found.bet,
        "tie_bet": found.tie_bet,
        "player_card": found.player_card,
        "dealer_card": found.dealer_card,
        "balance_before": found.balance_before,
        "created_at": found.created_at,
        "engine_version": found.engine_version,
        "rules_hash": found.rules_hash,
    }


def _details(
    hand_id: int,
    record: dict[str, Any],
    hand: Hand,
    fairness: Fairness,
    *,
    decided_by: str | None,
) -> HandDetails:
    """The hand as it was just written, without reading it back."""
    war = hand.war
    return HandDetails(
        id=hand_id,
        table_id=record["table_id"],
        player_id=record["player_id"],
        status=hand.status.value,
        currency=record["currency"],
        bet=hand.bet,
        tie_bet=hand.tie_bet,
        raise_amount=hand.raise_amount,
        player_card=hand.player_card,
        dealer_card=hand.dealer_card,
        war=WarCards(war.burned, war.player_card, war.dealer_card) if war else None,
        decision=hand.decision.value if hand.decision is not None else None,
        decided_by=decided_by,
        outcome=record["outcome"],
        total_staked=hand.total_staked,
        total_returned=record["total_returned"],
        net=record["net"],
        balance_before=record["balance_before"],
        balance_after=record["balance_after"],
        fairness=fairness,
        rules=record["rules"],
        created_at=record["created_at"],
        settled_at=record["settled_at"],
        engine=engine_of(record["engine_version"], record["rules_hash"]),
    )


def _own_hand(session: Session, hand_id: int, player_id: int | None) -> HandRecord:
    record = session.get(HandRecord, hand_id)
    # Another player's hand is "not found", never "forbidden": ids cannot be probed.
    if record is None or (player_id is not None and record.player_id != player_id):
        raise NotFound("hand")
    return record


def view_hand(
    session: Session, hand_id: int, *, player_id: int | None, reveal: bool
) -> HandDetails:
    record = _own_hand(session, hand_id, player_id)
    return hand_details(record, session.get_one(SeedPair, record.seed_pair_id), reveal=reveal)


def _at_table(table_id: int, *, awaiting_only: bool) -> ColumnElement[bool]:
    """The filter on a hand's table. Beside the status awaiting a decision it is written
    so that no index can serve it (`+ 0`): the hands awaiting a decision are a few, one a
    player at most, and are found by their status, where SQLite would otherwise read the
    table's whole history through its index, for the order that index gives."""
    if awaiting_only:
        return HandRecord.table_id + 0 == table_id
    return HandRecord.table_id == table_id


def list_hands(
    session: Session,
    *,
    player_id: int | None,
    table_id: int | None,
    status: str | None,
    cursor: str | None,
    limit: int,
    reveal: bool,
) -> Page[HandDetails]:
    after = decode_cursor(cursor)
    query = (
        select(HandRecord, SeedPair)
        .join(SeedPair, SeedPair.id == HandRecord.seed_pair_id)
        .order_by(HandRecord.id.desc())
        .limit(limit)
    )
    if after is not None:
        query = query.where(HandRecord.id < after)
    if player_id is not None:
        query = query.where(HandRecord.player_id == player_id)
    if table_id is not None:
        awaiting_only = status == HandStatus.AWAITING_DECISION
        query = query.where(_at_table(table_id, awaiting_only=awaiting_only))
    if status == HandStatus.SETTLED:
        # A hand is settled once it has its settlement time. So written, the filter lets the
        # database read the hands newest first by id and stop at the page's end, where
        # `status = 'settled'` has SQLite gather every settled hand through the index that
        # leads with the status and sort them all (0.3 s a page at 60,000 hands).
        query = query.where(HandRecord.settled_at.is_not(None))
    elif status is not None:
        # Awaiting a decision, so without a settlement time: so written beside the status,
        # the filter lets the database read the index of (status, settled_at, id) in the
        # page's order, where the status alone has SQLite sort every hand awaiting one.
        query = query.where(HandRecord.status == status, HandRecord.settled_at.is_(None))
    rows = session.execute(query).all()
    return Page(
        tuple(hand_details(record, pair, reveal=reveal) for record, pair in rows),
        next_cursor([record.id for record, _ in rows], limit),
    )
