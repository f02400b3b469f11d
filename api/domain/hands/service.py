"""Hands: the request path where `casino/` decides and `ledger/` records the money.

Every refusal (an unknown or closed table, a wager the table does not take, a hand that is
not awaiting a decision) comes from the checks before the first write, so a refused
request leaves nothing behind.
"""

from datetime import UTC, datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from api.db.models import HandRecord, SeedPair
from api.domain.hands import postings
from api.domain.hands.details import DecidedBy, HandDetails, hand_details
from api.domain.hands.postings import HandAccounts
from api.domain.players.turn import lock_player, refuse_if_unfinished
from api.domain.seeds import service as seeds
from api.domain.tables import service as tables
from api.errors import NotFound, Refused
from api.pagination import Page, decode_cursor, next_cursor
from casino.fairness import HandSeeds
from casino.hand import Action, Hand, HandStatus, deal, decide, play
from casino.rules import TableRules


def replay(record: HandRecord, pair: SeedPair) -> Hand:
    """The hand as the engine derives it from the record's seeds, rules and decision."""
    return play(
        TableRules.from_dict(record.rules).game,
        HandSeeds(pair.server_seed, pair.client_seed, record.nonce),
        record.bet,
        record.tie_bet,
        Action(record.decision) if record.decision is not None else None,
    )


def _state_fields(hand: Hand, wallet_before_settlement: int) -> dict[str, object]:
    """The record's status, and the columns settlement fills in."""
    if hand.total_returned is None or hand.outcome is None:
        return {"status": hand.status.value}
    return {
        "status": HandStatus.SETTLED.value,
        "outcome": hand.outcome.value,
        "total_returned": hand.total_returned,
        "net": hand.net,
        "balance_after": wallet_before_settlement + hand.total_returned,
        "settled_at": datetime.now(UTC),
    }


def open_hand(
    session: Session,
    player_id: int,
    table_id: int,
    bet: int,
    tie_bet: int,
    currency: str | None = None,
) -> HandDetails:
    lock_player(session, player_id)
    refuse_if_unfinished(session, player_id)
    table = tables.get_table(session, table_id)
    tables.require_open(table)
    rules = table.rules
    if currency is not None and currency != rules.currency:
        raise Refused(
            "currency_mismatch", f"table {table.id} plays in {rules.currency}, not {currency}"
        )
    rules.check_wager(bet, tie_bet)

    pair = seeds.active_pair(session, player_id, for_update=True)
    hand = deal(
        rules.game, HandSeeds(pair.server_seed, pair.client_seed, pair.next_nonce), bet, tie_bet
    )
    accounts = HandAccounts.of(player_id, rules.currency)
    balance_before = accounts.lock_player_accounts(session)
    # The row is written once, complete: the wallet's balance after is known arithmetically,
    # since every account it involves is locked.
    record = HandRecord(
        player_id=player_id,
        table_id=table.id,
        seed_pair_id=pair.id,
        nonce=pair.next_nonce,
        currency=rules.currency,
        rules=rules.as_dict(),
        bet=bet,
        tie_bet=tie_bet,
        raise_amount=0,
        player_card=hand.player_card,
        dealer_card=hand.dealer_card,
        total_staked=hand.total_staked,
        balance_before=balance_before,
        created_at=datetime.now(UTC),
        **_state_fields(hand, balance_before - hand.total_staked),
    )
    pair.next_nonce += 1
    session.add(record)
    session.flush()
    steps = [postings.stake(record, accounts)]
    if hand.status is HandStatus.SETTLED:
        steps.append(postings.settlement(record, hand, accounts))
    postings.post(session, record, accounts, steps)
    return hand_details(record, pair, reveal=False)


def _own_hand(session: Session, hand_id: int, player_id: int | None) -> HandRecord:
    record = session.get(HandRecord, hand_id)
    # Another player's hand is "not found", never "forbidden": ids cannot be probed.
    if record is None or (player_id is not None and record.player_id != player_id):
        raise NotFound("hand")
    return record


def decide_hand(
    session: Session,
    hand_id: int,
    action: Action,
    *,
    player_id: int | None,
    decided_by: DecidedBy = "player",
) -> HandDetails:
    """Apply a decision; `player_id` None is the house resolving an abandoned tie.

    The engine refuses a hand that is not awaiting a decision, and a surrender the table
    does not allow, before anything is written.
    """
    if player_id is not None:
        lock_player(session, player_id)
    record = _own_hand(session, hand_id, player_id)
    if player_id is None:
        lock_player(session, record.player_id)
        session.refresh(record)
    pair = session.get_one(SeedPair, record.seed_pair_id)
    hand = decide(replay(record, pair), action)
    accounts = HandAccounts.of(record.player_id, record.currency)
    # Deposits may have come in while the hand waited.
    wallet = accounts.lock_player_accounts(session)
    steps = [postings.settlement(record, hand, accounts, decided_by)]
    if action is Action.WAR:
        steps.insert(0, postings.raise_for_war(record, hand, accounts))
    postings.post(session, record, accounts, steps)
    # Set after posting, so the row is written in one UPDATE at the end.
    war = hand.war
    fields: dict[str, object] = {
        "decision": action.value,
        "decided_by": decided_by,
        "raise_amount": hand.raise_amount,
        "total_staked": hand.total_staked,
        "war_burned": list(war.burned) if war else None,
        "war_player_card": war.player_card if war else None,
        "war_dealer_card": war.dealer_card if war else None,
        **_state_fields(hand, wallet - hand.raise_amount),
    }
    for name, value in fields.items():
        setattr(record, name, value)
    session.flush()
    return hand_details(record, pair, reveal=False)


def view_hand(
    session: Session, hand_id: int, *, player_id: int | None, reveal: bool
) -> HandDetails:
    record = _own_hand(session, hand_id, player_id)
    return hand_details(record, session.get_one(SeedPair, record.seed_pair_id), reveal=reveal)


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
        query = query.where(HandRecord.table_id == table_id)
    if status is not None:
        query = query.where(HandRecord.status == status)
    rows = session.execute(query).all()
    return Page(
        tuple(hand_details(record, pair, reveal=reveal) for record, pair in rows),
        next_cursor([record.id for record, _ in rows], limit),
    )
