"""Hands: the request path where `casino/` decides and `ledger/` records the money.

Money flow, each step one balanced ledger transaction referencing `hand:<id>`:
stake (wallet -> held), raise on war (wallet -> held), settlement (held -> house for
everything staked, house -> wallet for everything returned).
"""

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Literal

from sqlalchemy import select
from sqlalchemy.orm import Session

from api.db.models import HandRecord, SeedPair
from api.domain.hands.schemas import Fairness, HandPage, HandView, WarView
from api.domain.players.turn import lock_player, refuse_if_unfinished
from api.domain.seeds import service as seeds
from api.domain.tables import service as tables
from api.errors import Conflict, NotFound, Refused
from api.pagination import decode_cursor, next_cursor
from casino.fairness import HandSeeds
from casino.hand import Action, Hand, HandStatus, deal, decide, play
from casino.rules import TableRules
from ledger import chart
from ledger.chains import chain_for
from ledger.errors import LedgerError
from ledger.model import AccountSpec, TransactionRequest, Transfer
from ledger.posting import lock_accounts, open_account, post_all

DecidedBy = Literal["player", "timeout"]


@dataclass(frozen=True, slots=True)
class HandAccounts:
    """The accounts a player's hands move, and the ledger chain they are posted on.

    The chain is the player's (`chain_for`), and the house account that chain's: two hands
    of different players mostly share neither, so neither row makes them wait for each other.
    """

    wallet: AccountSpec
    held: AccountSpec
    house: AccountSpec
    chain: int

    @classmethod
    def of(cls, player_id: int, currency: str) -> "HandAccounts":
        key = str(player_id)
        chain = chain_for(key)
        return cls(
            chart.wallet(key, currency),
            chart.held(key, currency),
            chart.house(currency, chain),
            chain,
        )

    def lock_player_accounts(self, session: Session) -> int:
        """Lock the player's own accounts and return the wallet's balance.

        The locked balance makes re-reading the wallet unnecessary. The house account is
        deliberately not locked here: every hand on the chain touches it, so holding it
        from the deal to the commit would serialise them; `post_all` locks it only for the
        posting, in account-id order like every other posting. Accounts are opened on a
        player's first hand in a currency; afterwards this is one query.
        """
        codes = [self.wallet.code, self.held.code]
        locked = lock_accounts(session, codes)
        if len(locked) < len(codes):
            for spec in (self.wallet, self.held, self.house):
                open_account(session, spec)
            locked = lock_accounts(session, codes)
        return locked[self.wallet.code]


def replay(record: HandRecord, pair: SeedPair) -> Hand:
    """The hand as the engine derives it from the record's seeds, rules and decision."""
    return play(
        TableRules.from_dict(record.rules).game,
        HandSeeds(pair.server_seed, pair.client_seed, record.nonce),
        record.bet,
        record.tie_bet,
        Action(record.decision) if record.decision is not None else None,
    )


Movement = tuple[AccountSpec, AccountSpec, int]  # debit, credit, amount


def _step(
    record: HandRecord, step: str, movements: Sequence[Movement], **metadata: str
) -> TransactionRequest:
    """One step of the hand as a ledger transaction; a zero movement (nothing returned on a
    loss) is left out.

    The metadata is covered by the ledger's hash chain, so the audit can hold the hand record
    to it (who played, at which table, and who decided).
    """
    return TransactionRequest(
        kind=step,
        idempotency_key=f"hand:{record.id}:{step}",
        transfers=tuple(
            Transfer(debit=debit.code, credit=credit.code, amount=amount)
            for debit, credit, amount in movements
            if amount > 0
        ),
        reference=f"hand:{record.id}",
        metadata={"player_id": record.player_id, "table_id": record.table_id, **metadata},
    )


def _settlement(
    record: HandRecord,
    hand: Hand,
    accounts: HandAccounts,
    decided_by: DecidedBy | None = None,
) -> TransactionRequest:
    """Everything staked goes to the house; everything returned comes back to the wallet."""
    assert hand.total_returned is not None
    decision = (
        {"decision": hand.decision.value, "decided_by": decided_by}
        if hand.decision is not None and decided_by is not None
        else {}
    )
    return _step(
        record,
        "settlement",
        [
            (accounts.held, accounts.house, hand.total_staked),
            (accounts.house, accounts.wallet, hand.total_returned),
        ],
        **decision,
    )


def _post(
    session: Session,
    record: HandRecord,
    accounts: HandAccounts,
    steps: Sequence[TransactionRequest],
) -> None:
    """Post the steps of one request (stake and settlement, or raise and settlement) as one
    batch on the player's chain: each its own ledger transaction, sharing the ledger's
    round trips."""
    if any(posted.replayed for posted in post_all(session, steps, chain=accounts.chain)):
        # A hand's keys are new by construction: money must have moved now.
        raise LedgerError(f"hand {record.id} was already posted")


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
) -> HandView:
    lock_player(session, player_id)
    refuse_if_unfinished(session, player_id)
    table = tables.get_table(session, table_id)
    tables.require_open(table)
    rules = tables.table_rules(table)
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
    steps = [_step(record, "stake", [(accounts.wallet, accounts.held, bet + tie_bet)])]
    if hand.status is HandStatus.SETTLED:
        steps.append(_settlement(record, hand, accounts))
    _post(session, record, accounts, steps)
    return to_view(record, pair, reveal=False)


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
) -> HandView:
    """Apply a decision; `player_id` None is the house resolving an abandoned tie."""
    if player_id is not None:
        lock_player(session, player_id)
    record = _own_hand(session, hand_id, player_id)
    if player_id is None:
        lock_player(session, record.player_id)
        session.refresh(record)
    if record.status != HandStatus.AWAITING_DECISION.value:
        raise Conflict("hand_not_awaiting_decision", f"hand {hand_id} is already settled")
    pair = session.get_one(SeedPair, record.seed_pair_id)
    hand = decide(replay(record, pair), action)  # refuses surrender where not allowed
    accounts = HandAccounts.of(record.player_id, record.currency)
    # Deposits may have come in while the hand waited.
    wallet = accounts.lock_player_accounts(session)
    steps = [_settlement(record, hand, accounts, decided_by)]
    if action is Action.WAR:
        steps.insert(
            0, _step(record, "raise", [(accounts.wallet, accounts.held, hand.raise_amount)])
        )
    _post(session, record, accounts, steps)
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
    return to_view(record, pair, reveal=False)


def view_hand(session: Session, hand_id: int, *, player_id: int | None, reveal: bool) -> HandView:
    record = _own_hand(session, hand_id, player_id)
    return to_view(record, session.get_one(SeedPair, record.seed_pair_id), reveal=reveal)


def list_hands(
    session: Session,
    *,
    player_id: int | None,
    table_id: int | None,
    status: str | None,
    cursor: str | None,
    limit: int,
    reveal: bool,
) -> HandPage:
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
    return HandPage(
        items=[to_view(record, pair, reveal=reveal) for record, pair in rows],
        next_cursor=next_cursor([record.id for record, _ in rows], limit),
    )


def to_view(record: HandRecord, pair: SeedPair, *, reveal: bool) -> HandView:
    """The hand as clients see it; the server seed only once revealed (or to an auditor)."""
    war = (
        WarView(
            burned=list(record.war_burned or []),
            player_card=record.war_player_card,
            dealer_card=record.war_dealer_card,
        )
        if record.war_player_card is not None and record.war_dealer_card is not None
        else None
    )
    shown_seed = pair.server_seed if reveal or pair.revealed_at is not None else None
    return HandView.model_validate(
        {
            "id": record.id,
            "table_id": record.table_id,
            "player_id": record.player_id,
            "status": record.status,
            "currency": record.currency,
            "bet": record.bet,
            "tie_bet": record.tie_bet,
            "raise": record.raise_amount,
            "player_card": record.player_card,
            "dealer_card": record.dealer_card,
            "war": war,
            "decision": record.decision,
            "decided_by": record.decided_by,
            "outcome": record.outcome,
            "total_staked": record.total_staked,
            "total_returned": record.total_returned,
            "net": record.net,
            "balance_before": record.balance_before,
            "balance_after": record.balance_after,
            "fairness": Fairness(
                server_seed_hash=pair.server_seed_hash,
                client_seed=pair.client_seed,
                nonce=record.nonce,
                server_seed=shown_seed,
            ),
            "rules": tables.rules_view(record.rules),
            "created_at": record.created_at,
            "settled_at": record.settled_at,
        }
    )
