"""The audit endpoints' bodies, built from the replay's and the integrity checks' results.

A tampered hand row must give a mismatch, never a server error: a record that no longer fits
the response schema is shown as null, with differences naming the fields that do not fit.
"""

from collections.abc import Callable
from typing import Any, TypeVar

from pydantic import ValidationError
from sqlalchemy.orm import Session

from api.db.models import ApiToken, HandRecord, SeedPair
from api.domain.audit.batch import audit_one_hand
from api.domain.audit.integrity import audit_ledger
from api.domain.audit.schemas import (
    AuditDifference,
    AuditSeeds,
    DerivedHand,
    FirstDeal,
    GameRecall,
    HandActors,
    HandAudit,
    LedgerEntryView,
    LedgerIntegrity,
    LedgerTransactionView,
    TokenActor,
)
from api.domain.hands.details import hand_details, war_cards
from api.domain.hands.ledger import reference
from api.domain.hands.schemas import HandView
from api.domain.tables.schemas import Rules
from api.errors import NotFound
from ledger.posting import transactions_for_reference

T = TypeVar("T")


def _schema_differences(error: Exception, named: set[str]) -> list[AuditDifference]:
    """A record that no longer fits the response schema, as differences naming the fields
    (those the replay has not named already)."""
    if not isinstance(error, ValidationError):
        return [] if named else [AuditDifference(field="hand", recorded=None, derived=str(error))]
    prefix = "rules." if error.title == Rules.__name__ else ""
    found: list[AuditDifference] = []
    for detail in error.errors():
        name = prefix + ".".join(str(part) for part in detail["loc"])
        if name in named:
            continue
        named.add(name)
        found.append(
            AuditDifference(
                field=name,
                recorded=_jsonable(detail.get("input")),
                derived=f"a value the hand schema accepts: {detail['msg']}",
            )
        )
    return found


def _jsonable(value: Any) -> Any:
    return value if isinstance(value, str | int | float | bool | None | list | dict) else str(value)


def _fitting(build: Callable[[], T], differences: list[AuditDifference]) -> T | None:
    """`build()`, or None with the reasons added to `differences` when the stored record
    does not fit the schema (a tampered row must give a mismatch, not a server error)."""
    try:
        return build()
    except (ValidationError, ValueError, TypeError, KeyError) as error:
        differences.extend(_schema_differences(error, {d.field for d in differences}))
        return None


def _recall(record: HandRecord) -> GameRecall:
    return GameRecall.model_validate(
        {
            "started_at": record.created_at,
            "ended_at": record.settled_at,
            "balance_before": record.balance_before,
            "balance_after": record.balance_after,
            "total_staked": record.total_staked,
            "total_returned": record.total_returned,
            "net": record.net,
            "decision": record.decision,
            "decided_by": record.decided_by,
            "first_deal": FirstDeal(player_card=record.player_card, dealer_card=record.dealer_card),
            "war": war_cards(record),
            "outcome": record.outcome,
            "rules": Rules.model_validate(record.rules),
        }
    )


def _token_actor(session: Session, token_id: int | None) -> TokenActor | None:
    token = None if token_id is None else session.get(ApiToken, token_id)
    if token is None:
        return None
    return TokenActor(
        token_id=token.id, role=token.role, name=token.name, issued_by=token.issued_by
    )


def _actors(session: Session, record: HandRecord) -> HandActors:
    return HandActors(
        placed=_token_actor(session, record.placed_by_token),
        decided=_token_actor(session, record.decided_by_token),
    )


def hand_audit(session: Session, hand_id: int) -> HandAudit:
    """One hand, its seeds (always shown to an auditor), its replay, its ledger, the verdict.

    Never a server error on a tampered row: a record that no longer fits the response schema
    is shown as null `hand` / `recall`, with differences naming the offending fields.
    """
    audit = audit_one_hand(session, hand_id)
    if audit is None:
        raise NotFound("hand")
    record = session.get_one(HandRecord, hand_id)
    pair = session.get(SeedPair, record.seed_pair_id)
    differences = [
        AuditDifference.model_validate(d, from_attributes=True) for d in audit.differences
    ]
    view = (
        _fitting(
            lambda: HandView.model_validate(hand_details(record, pair, reveal=True)), differences
        )
        if pair is not None
        else None
    )
    recall = _fitting(lambda: _recall(record), differences)
    posted = transactions_for_reference(session, reference(hand_id))
    return HandAudit(
        actors=_actors(session, record),
        hand=view,
        seeds=AuditSeeds(
            seed_pair_id=pair.id,
            server_seed=pair.server_seed,
            server_seed_hash=pair.server_seed_hash,
            client_seed=pair.client_seed,
            nonce=record.nonce,
            revealed_at=pair.revealed_at,
            commitment_ok=audit.commitment_ok,
        )
        if pair is not None
        else None,
        derived=DerivedHand.of(audit.derived) if audit.derived is not None else None,
        ledger_transactions=[
            LedgerTransactionView(
                id=txn.id,
                seq=txn.seq,
                kind=txn.kind,
                reference=txn.reference,
                posted_at=txn.posted_at,
                entries=[
                    LedgerEntryView(account=e.account, currency=e.currency, amount=e.amount)
                    for e in txn.entries
                ],
                hash=txn.hash,
            )
            for txn in posted
        ],
        verdict="mismatch" if differences else "match",
        differences=differences,
        recall=recall,
    )


def ledger_integrity(session: Session) -> LedgerIntegrity:
    return LedgerIntegrity.model_validate(audit_ledger(session), from_attributes=True)
