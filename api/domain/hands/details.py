"""A hand as its clients see it, read from its record and its seed pair.

Structs rather than dataclasses: a hand's details are also the body of the answer to the
commands that deal and decide it, and msgspec writes a Struct as `HandView` dumps it (its
fields in the contract's order, under the contract's names) in a fraction of the time that
validating and dumping the model takes (`api.domain.hands.answer.HandAnswer`).
"""

from collections.abc import Mapping
from datetime import datetime
from typing import Any

import msgspec

from api.db.models import HandRecord, SeedPair


class WarCards(msgspec.Struct, frozen=True):
    burned: tuple[str, ...]
    player_card: str
    dealer_card: str


class Fairness(msgspec.Struct, frozen=True):
    """The seeds a hand was dealt from; the server seed only once it may be shown."""

    server_seed_hash: str
    client_seed: str
    nonce: int
    server_seed: str | None


class Engine(msgspec.Struct, frozen=True):
    """The game software that dealt the hand and the hash of the rules it dealt under."""

    version: str
    rules_hash: str | None


def engine_of(version: str | None, rules_hash: str | None) -> Engine | None:
    """None for hands dealt before the version was recorded."""
    return None if version is None else Engine(version, rules_hash)


class HandDetails(msgspec.Struct, frozen=True, kw_only=True):
    id: int
    table_id: int
    player_id: int
    status: str
    currency: str
    bet: int
    tie_bet: int
    raise_amount: int = msgspec.field(name="raise")  # required: only its JSON name is set
    player_card: str
    dealer_card: str
    war: WarCards | None
    decision: str | None
    decided_by: str | None
    outcome: str | None
    total_staked: int
    total_returned: int | None
    net: int | None
    balance_before: int
    balance_after: int | None
    fairness: Fairness
    rules: Mapping[str, Any]
    created_at: datetime
    settled_at: datetime | None
    engine: Engine | None


def war_cards(record: HandRecord) -> WarCards | None:
    if record.war_player_card is None or record.war_dealer_card is None:
        return None
    return WarCards(tuple(record.war_burned or ()), record.war_player_card, record.war_dealer_card)


def hand_details(record: HandRecord, pair: SeedPair, *, reveal: bool) -> HandDetails:
    """The hand as recorded; the server seed only once revealed, or to an auditor (`reveal`)."""
    shown_seed = pair.server_seed if reveal or pair.revealed_at is not None else None
    return HandDetails(
        id=record.id,
        table_id=record.table_id,
        player_id=record.player_id,
        status=record.status,
        currency=record.currency,
        bet=record.bet,
        tie_bet=record.tie_bet,
        raise_amount=record.raise_amount,
        player_card=record.player_card,
        dealer_card=record.dealer_card,
        war=war_cards(record),
        decision=record.decision,
        decided_by=record.decided_by,
        outcome=record.outcome,
        total_staked=record.total_staked,
        total_returned=record.total_returned,
        net=record.net,
        balance_before=record.balance_before,
        balance_after=record.balance_after,
        fairness=Fairness(pair.server_seed_hash, pair.client_seed, record.nonce, shown_seed),
        rules=record.rules,
        created_at=record.created_at,
        settled_at=record.settled_at,
        engine=engine_of(record.engine_version, record.rules_hash),
    )
