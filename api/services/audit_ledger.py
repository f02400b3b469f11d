"""Ledger integrity seen from the casino: `ledger.verify` plus checks that know about hands.

`ledger.verify.verify_ledger` checks what the ledger knows (hash chain, trial balance, stored
balances). On top, what only the casino can check:
- money held: every `held:<player>:<currency>` account holds exactly the stakes of that
  player's hands awaiting a decision (per account, so the player is named);
- no stake, raise or settlement references a hand that does not exist (a deleted hand row,
  or a reference that names no hand at all).
"""

from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import (
    BigInteger,
    ColumnElement,
    Connection,
    String,
    case,
    cast,
    func,
    literal,
    select,
)
from sqlalchemy.orm import Session

from api.db.models import HandRecord
from api.services.audit import HandAuditResult, audit_hands, connection_of
from api.services.hand_ledger import HAND_KINDS, REFERENCE_PREFIX
from casino.hand import HandStatus
from ledger.schema import accounts, transactions
from ledger.verify import LedgerReport, verify_ledger

hands_table = HandRecord.__table__

CHAIN_CODES = frozenset(
    {"seq_gap", "prev_hash_mismatch", "hash_mismatch", "head_mismatch", "head_missing"}
)
TRIAL_CODES = frozenset({"unbalanced", "no_entries", "currency_mismatch", "orphan_entries"})
BALANCE_CODES = frozenset({"balance_mismatch", "limit_breached"})


@dataclass(frozen=True, slots=True)
class CasinoProblem:
    """A casino-level discrepancy, naming the row (`table`, `row_id`) it is about."""

    table: str
    row_id: int | None
    code: str
    detail: str

    def as_dict(self) -> dict[str, Any]:
        return {
            "table": self.table,
            "row_id": self.row_id,
            "code": self.code,
            "detail": self.detail,
        }


@dataclass(frozen=True, slots=True)
class HeldByCurrency:
    currency: str
    held: int
    unsettled_stakes: int
    unsettled_hands: int

    @property
    def ok(self) -> bool:
        return self.held == self.unsettled_stakes


@dataclass(slots=True)
class LedgerAudit:
    ledger: LedgerReport
    held: list[HeldByCurrency] = field(default_factory=list)
    problems: list[CasinoProblem] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.ledger.ok and not self.problems

    def section_ok(self, codes: frozenset[str]) -> bool:
        return not any(p.code in codes for p in self.ledger.problems)

    def as_dict(self) -> dict[str, Any]:
        report = self.ledger

        def problems_of(codes: frozenset[str]) -> list[dict[str, Any]]:
            return [
                {
                    "table": p.table,
                    "row_id": p.row_id,
                    "seq": p.seq,
                    "code": p.code,
                    "detail": p.detail,
                }
                for p in report.problems
                if p.code in codes
            ]

        return {
            "ok": self.ok,
            "hash_chain": {
                "ok": self.section_ok(CHAIN_CODES),
                "transactions_checked": report.transactions_checked,
                "head": {"seq": report.head_seq, "hash": report.head_hash},
                "problems": problems_of(CHAIN_CODES),
            },
            "trial_balance": {
                "ok": self.section_ok(TRIAL_CODES),
                "entries_checked": report.entries_checked,
                "by_currency": dict(report.trial_balance),
                "problems": problems_of(TRIAL_CODES),
            },
            "stored_balances": {
                "ok": self.section_ok(BALANCE_CODES),
                "accounts_checked": report.accounts_checked,
                "problems": problems_of(BALANCE_CODES),
            },
            "held_for_unsettled_hands": {
                "ok": all(h.ok for h in self.held)
                and not any(p.code == "held_mismatch" for p in self.problems),
                "by_currency": [
                    {
                        "currency": h.currency,
                        "held": h.held,
                        "unsettled_stakes": h.unsettled_stakes,
                        "unsettled_hands": h.unsettled_hands,
                        "ok": h.ok,
                    }
                    for h in self.held
                ],
                "problems": [p.as_dict() for p in self.problems if p.code == "held_mismatch"],
            },
            "hand_references": {
                "ok": not any(p.code == "unknown_hand" for p in self.problems),
                "problems": [p.as_dict() for p in self.problems if p.code == "unknown_hand"],
            },
            "other_problems": [
                {
                    "table": p.table,
                    "row_id": p.row_id,
                    "seq": p.seq,
                    "code": p.code,
                    "detail": p.detail,
                }
                for p in report.problems
                if p.code not in CHAIN_CODES | TRIAL_CODES | BALANCE_CODES
            ],
        }


def check_held(connection: Connection) -> tuple[list[HeldByCurrency], list[CasinoProblem]]:
    """Each held account against the stakes of its player's hands awaiting a decision."""
    held_rows = connection.execute(
        select(accounts.c.id, accounts.c.code, accounts.c.currency, accounts.c.balance).where(
            accounts.c.code.like("held:%")
        )
    ).all()
    h = hands_table.c
    stake_rows = connection.execute(
        select(
            h.player_id,
            h.currency,
            func.sum(h.total_staked),
            func.count(),
            func.min(h.id),
        )
        .where(h.status == HandStatus.AWAITING_DECISION.value)
        .group_by(h.player_id, h.currency)
    ).all()
    stakes = {
        f"held:{player}:{currency}": (int(total), int(count), int(first))
        for player, currency, total, count, first in stake_rows
    }
    per_currency: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
    problems: list[CasinoProblem] = []
    seen: set[str] = set()
    for account_id, code, currency, balance in held_rows:
        seen.add(code)
        staked, count, first = stakes.get(code, (0, 0, 0))
        totals = per_currency[currency]
        totals[0] += int(balance)
        totals[1] += staked
        totals[2] += count
        if int(balance) != staked:
            problems.append(
                CasinoProblem(
                    "ledger_accounts",
                    int(account_id),
                    "held_mismatch",
                    f"{code} holds {balance} but the player's unsettled hands staked {staked}"
                    + (f" (hand {first})" if count else ""),
                )
            )
    for code, (staked, count, first) in stakes.items():
        if code not in seen:
            currency = code.rsplit(":", 1)[1]
            per_currency[currency][1] += staked
            per_currency[currency][2] += count
            problems.append(
                CasinoProblem(
                    "hands",
                    first,
                    "held_mismatch",
                    f"{code} does not exist but hand {first} awaits a decision",
                )
            )
    held = [
        HeldByCurrency(currency, totals[0], totals[1], totals[2])
        for currency, totals in sorted(per_currency.items())
    ]
    return held, problems


def check_hand_references(connection: Connection) -> list[CasinoProblem]:
    """Stakes, raises and settlements whose `hand:<id>` names no hand row."""
    t = transactions.c
    suffix = func.substr(t.reference, len(REFERENCE_PREFIX) + 1)
    hand_id: ColumnElement[Any]
    if connection.dialect.name == "postgresql":
        numeric = t.reference.regexp_match(r"^hand:[0-9]{1,18}$")
        hand_id = case((numeric, cast(suffix, BigInteger)), else_=None)
    else:
        hand_id = cast(suffix, BigInteger)
    h = hands_table.c
    rows = connection.execute(
        select(t.id, t.seq, t.kind, t.reference)
        .select_from(transactions.outerjoin(hands_table, h.id == hand_id))
        .where(
            t.kind.in_(HAND_KINDS),
            (h.id.is_(None))
            | (t.reference.is_(None))
            | (t.reference != literal(REFERENCE_PREFIX, String) + cast(h.id, String)),
        )
        .order_by(t.seq)
    ).all()
    return [
        CasinoProblem(
            "ledger_transactions",
            int(txn_id),
            "unknown_hand",
            f"{kind} transaction {txn_id} (seq {seq}) references {reference!r}, "
            "which is no hand: the hand row was deleted or the reference altered",
        )
        for txn_id, seq, kind, reference in rows
    ]


def audit_ledger(
    session_or_connection: Session | Connection,
    on_progress: Callable[[int], None] | None = None,
) -> LedgerAudit:
    """The whole-ledger checks: `verify_ledger`, money held, and hand references."""
    connection = connection_of(session_or_connection)
    report = verify_ledger(connection, on_progress=on_progress)
    held, problems = check_held(connection)
    problems.extend(check_hand_references(connection))
    return LedgerAudit(report, held, problems)


@dataclass(slots=True)
class PeriodAudit:
    start: datetime | None
    end: datetime | None
    hands: HandAuditResult
    ledger: LedgerAudit

    @property
    def ok(self) -> bool:
        return self.hands.ok and self.ledger.ok

    def as_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "range": {
                "start": self.start.isoformat() if self.start else None,
                "end": self.end.isoformat() if self.end else None,
                "by": "created_at",
            },
            "hands": self.hands.as_dict(),
            "ledger": self.ledger.as_dict(),
        }


def audit_period(
    connection: Connection,
    start: datetime | None,
    end: datetime | None,
    on_hands: Callable[[int], None] | None = None,
    on_ledger: Callable[[int], None] | None = None,
) -> PeriodAudit:
    hands = audit_hands(connection, start, end, on_hands)
    return PeriodAudit(start, end, hands, audit_ledger(connection, on_ledger))
