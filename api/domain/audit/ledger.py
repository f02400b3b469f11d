"""Ledger integrity seen from the casino: `ledger.verify` plus checks that know about hands.

`ledger.verify.verify_ledger` checks what the ledger knows (hash chain, trial balance, stored
balances). On top, what only the casino can check:
- money held: every `held:<player>:<currency>` account holds exactly the stakes of that
  player's hands awaiting a decision (per account, so the player is named);
- no stake, raise or settlement references a hand that does not exist (a deleted hand row,
  or a reference that names no hand at all);
- nonce continuity: each seed pair's hands have exactly the nonces 0..next_nonce-1, so a
  hand deleted together with its ledger transactions (and the chain re-hashed over the
  gap) still leaves a hole where its nonce was.
"""

from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator
from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import (
    BigInteger,
    ColumnElement,
    Connection,
    String,
    bindparam,
    case,
    cast,
    distinct,
    func,
    literal,
    or_,
    select,
)
from sqlalchemy.orm import Session

from api.db.models import hands_table, seed_pairs_table
from api.db.snapshot import connection_of
from api.domain.audit.hands import HandAuditResult
from api.domain.audit.parallel import CHUNK, audit_hands_parallel
from api.domain.hands.ledger import HAND_KINDS, REFERENCE_PREFIX
from casino.hand import HandStatus
from ledger.schema import accounts, transactions
from ledger.verify import LedgerReport, verify_ledger

NONCE_CODES = frozenset({"nonce_gap", "nonce_duplicate", "nonce_out_of_range", "unknown_seed_pair"})
# Problems named per seed pair before the rest are summed up in one: a wiped-out pair must
# not make the report as long as the hands it lost.
MAX_NONCE_PROBLEMS_PER_PAIR = 50

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
    seed_pairs_checked: int = 0

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
                "heads": [asdict(head) for head in report.heads],
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
            "nonce_continuity": {
                "ok": not any(p.code in NONCE_CODES for p in self.problems),
                "seed_pairs_checked": self.seed_pairs_checked,
                "problems": [p.as_dict() for p in self.problems if p.code in NONCE_CODES],
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


_p = seed_pairs_table.c
_hand_count = func.count(hands_table.c.id)
# One GROUP BY over the hands (served by the unique (seed_pair_id, nonce) index): the seed
# pairs whose hands are not exactly the nonces 0..next_nonce-1. A pair without hands has
# NULL min/max, which the HAVING leaves alone when next_nonce is 0 too.
_BROKEN_PAIRS = (
    select(_p.id, _p.next_nonce)
    .select_from(seed_pairs_table.outerjoin(hands_table, hands_table.c.seed_pair_id == _p.id))
    .group_by(_p.id, _p.next_nonce)
    .having(
        or_(
            _hand_count != _p.next_nonce,
            func.count(distinct(hands_table.c.nonce)) != _hand_count,
            func.min(hands_table.c.nonce) != 0,
            func.max(hands_table.c.nonce) != _p.next_nonce - 1,
        )
    )
    .order_by(_p.id)
)
_PAIR_NONCES = (
    select(hands_table.c.nonce, hands_table.c.id)
    .where(hands_table.c.seed_pair_id == bindparam("seed_pair_id"))
    .order_by(hands_table.c.nonce, hands_table.c.id)
    .execution_options(yield_per=2000)  # streamed: a broken pair may have many hands
)
_ORPHAN_HANDS = (
    select(hands_table.c.id, hands_table.c.seed_pair_id)
    .select_from(hands_table.outerjoin(seed_pairs_table, _p.id == hands_table.c.seed_pair_id))
    .where(_p.id.is_(None))
    .order_by(hands_table.c.id)
)


def _span(first: int, last: int) -> str:
    return str(first) if first == last else f"{first}-{last}"


def _pair_problems(
    pair_id: int, next_nonce: int, nonces: Iterable[tuple[int, int]]
) -> Iterator[CasinoProblem]:
    """Walk one seed pair's (nonce, hand id) in nonce order: every gap in 0..next_nonce-1,
    every nonce used twice, every nonce outside the range. Streams: memory stays flat."""
    expected = 0  # the next nonce a hand should have
    previous: int | None = None
    for nonce, hand_id in nonces:
        if nonce < 0 or nonce >= next_nonce:
            yield CasinoProblem(
                "hands",
                hand_id,
                "nonce_out_of_range",
                f"hand {hand_id} has nonce {nonce}, outside 0..{next_nonce - 1} "
                f"of seed pair {pair_id} (next_nonce {next_nonce})",
            )
            continue
        if nonce == previous:
            yield CasinoProblem(
                "hands",
                hand_id,
                "nonce_duplicate",
                f"hand {hand_id} repeats nonce {nonce} of seed pair {pair_id}",
            )
            continue
        if nonce > expected:
            yield _gap(pair_id, next_nonce, expected, nonce - 1)
        previous, expected = nonce, nonce + 1
    if expected < next_nonce:
        yield _gap(pair_id, next_nonce, expected, next_nonce - 1)


def _gap(pair_id: int, next_nonce: int, first: int, last: int) -> CasinoProblem:
    count = last - first + 1
    return CasinoProblem(
        "seed_pairs",
        pair_id,
        "nonce_gap",
        f"seed pair {pair_id}: no hand has nonce{'s' if count > 1 else ''} "
        f"{_span(first, last)} (next_nonce {next_nonce}): "
        f"{'hands' if count > 1 else 'a hand'} deleted, or next_nonce altered",
    )


def check_nonce_continuity(connection: Connection) -> tuple[int, list[CasinoProblem]]:
    """(seed pairs checked, problems): per seed pair, its hands' nonces are exactly
    0..next_nonce-1; and every hand's seed pair exists.

    One grouped query finds the broken pairs; only those are read nonce by nonce.
    """
    pairs_checked = int(
        connection.execute(select(func.count()).select_from(seed_pairs_table)).scalar_one()
    )
    problems: list[CasinoProblem] = []
    for pair_id, next_nonce in connection.execute(_BROKEN_PAIRS).all():
        found = _pair_problems(
            int(pair_id),
            int(next_nonce),
            (
                (int(nonce), int(hand_id))
                for nonce, hand_id in connection.execute(_PAIR_NONCES, {"seed_pair_id": pair_id})
            ),
        )
        named = 0
        more = 0
        for problem in found:
            if named < MAX_NONCE_PROBLEMS_PER_PAIR:
                problems.append(problem)
                named += 1
            else:
                more += 1
        if more:
            problems.append(
                CasinoProblem(
                    "seed_pairs",
                    int(pair_id),
                    "nonce_gap",
                    f"seed pair {pair_id}: {more} more nonce problems not listed",
                )
            )
    problems.extend(
        CasinoProblem(
            "hands",
            int(hand_id),
            "unknown_seed_pair",
            f"hand {hand_id} names seed pair {pair_id}, which does not exist",
        )
        for hand_id, pair_id in connection.execute(_ORPHAN_HANDS)
    )
    return pairs_checked, problems


def audit_ledger(
    session_or_connection: Session | Connection,
    on_progress: Callable[[int], None] | None = None,
) -> LedgerAudit:
    """The whole-database checks: `verify_ledger`, money held, hand references, and nonce
    continuity (hands deleted together with their ledger transactions)."""
    connection = connection_of(session_or_connection)
    report = verify_ledger(connection, on_progress=on_progress)
    held, problems = check_held(connection)
    problems.extend(check_hand_references(connection))
    pairs_checked, nonce_problems = check_nonce_continuity(connection)
    problems.extend(nonce_problems)
    return LedgerAudit(report, held, problems, pairs_checked)


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
    *,
    jobs: int = 1,
    chunk: int = CHUNK,
) -> PeriodAudit:
    """Every hand of [start, end) replayed (by up to `jobs` processes, `chunk` hands at a
    time; 1: in this process), then the whole-ledger checks, here, in the same snapshot."""
    hands = audit_hands_parallel(connection, start, end, on_hands, jobs=jobs, chunk=chunk)
    return PeriodAudit(start, end, hands, audit_ledger(connection, on_ledger))
