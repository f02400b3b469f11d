"""Ledger integrity seen from the casino: `ledger.verify` plus checks that know about hands.

`ledger.verify.verify_ledger` checks what the ledger knows (hash chain, trial balance, stored
balances). On top, what only the casino can check:
- money held: every held account (`ledger.chart.held`) holds exactly the stakes of that
  player's hands awaiting a decision (per account, so the player is named);
- no stake, raise or settlement references a hand that does not exist (a deleted hand row,
  or a reference that names no hand at all);
- nonce continuity (`api.domain.audit.nonces`): each seed pair's hands have exactly the
  nonces 0..next_nonce-1, so a hand deleted together with its ledger transactions (and the
  chain re-hashed over the gap) still leaves a hole where its nonce was.
"""

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import (
    BigInteger,
    ColumnElement,
    Connection,
    case,
    cast,
    func,
    select,
)
from sqlalchemy.orm import Session

from api.db.models import hands_table
from api.db.snapshot import connection_of
from api.domain.audit.nonces import check_nonce_continuity
from api.domain.audit.parallel import CHUNK, audit_hands_parallel
from api.domain.audit.results import (
    CasinoCode,
    CasinoProblem,
    HashChainCheck,
    HeldByCurrency,
    HeldCheck,
    LedgerAudit,
    Period,
    PeriodAudit,
    ReferencesCheck,
    StoredBalancesCheck,
    TrialBalanceCheck,
)
from api.domain.hands.ledger import HAND_KINDS, HAND_REFERENCE, REFERENCE_PREFIX
from casino.hand import HandStatus
from ledger import chart
from ledger.report import CHECK_OF, LedgerCheck, LedgerProblem, LedgerReport
from ledger.schema import accounts, transactions
from ledger.verify import verify_ledger


@dataclass(frozen=True, slots=True)
class _Stakes:
    """What a player's hands awaiting a decision staked, in one currency."""

    currency: str
    staked: int
    hands: int
    first_hand: int


def _unsettled_stakes(connection: Connection) -> dict[str, _Stakes]:
    """The stakes of the hands awaiting a decision, by the held account holding them."""
    h = hands_table.c
    rows = connection.execute(
        select(h.player_id, h.currency, func.sum(h.total_staked), func.count(), func.min(h.id))
        .where(h.status == HandStatus.AWAITING_DECISION.value)
        .group_by(h.player_id, h.currency)
    ).all()
    return {
        chart.held(str(player), currency).code: _Stakes(
            currency, int(total), int(count), int(first)
        )
        for player, currency, total, count, first in rows
    }


def check_held(connection: Connection) -> HeldCheck:
    """Each held account against the stakes of its player's hands awaiting a decision."""
    held_rows = connection.execute(
        select(accounts.c.id, accounts.c.code, accounts.c.currency, accounts.c.balance).where(
            accounts.c.code.like(chart.HELD_PREFIX + "%")
        )
    ).all()
    stakes = _unsettled_stakes(connection)
    totals: dict[str, tuple[int, int, int]] = {}  # currency: held, staked, hands
    problems: list[CasinoProblem] = []
    for account_id, code, currency, balance in held_rows:
        found = stakes.pop(code, _Stakes(currency, 0, 0, 0))
        held, staked, hands = totals.get(currency, (0, 0, 0))
        totals[currency] = (held + int(balance), staked + found.staked, hands + found.hands)
        if int(balance) != found.staked:
            named = f" (hand {found.first_hand})" if found.hands else ""
            problems.append(
                CasinoProblem(
                    "ledger_accounts",
                    int(account_id),
                    CasinoCode.HELD_MISMATCH,
                    f"{code} holds {balance} but the player's unsettled hands staked "
                    f"{found.staked}{named}",
                )
            )
    for code, missing in stakes.items():  # staked into a held account that does not exist
        held, staked, hands = totals.get(missing.currency, (0, 0, 0))
        totals[missing.currency] = (held, staked + missing.staked, hands + missing.hands)
        problems.append(
            CasinoProblem(
                "hands",
                missing.first_hand,
                CasinoCode.HELD_MISMATCH,
                f"{code} does not exist but hand {missing.first_hand} awaits a decision",
            )
        )
    by_currency = tuple(HeldByCurrency(currency, *totals[currency]) for currency in sorted(totals))
    return HeldCheck(by_currency, tuple(problems))


def check_hand_references(connection: Connection) -> ReferencesCheck:
    """Stakes, raises and settlements whose `hand:<id>` names no hand row."""
    t = transactions.c
    suffix = func.substr(t.reference, len(REFERENCE_PREFIX) + 1)
    hand_id: ColumnElement[Any]
    if connection.dialect.name == "postgresql":
        numeric = t.reference.regexp_match(f"^{REFERENCE_PREFIX}[0-9]{{1,18}}$")
        hand_id = case((numeric, cast(suffix, BigInteger)), else_=None)
    else:
        hand_id = cast(suffix, BigInteger)
    h = hands_table.c
    rows = connection.execute(
        select(t.id, t.seq, t.kind, t.reference)
        .select_from(transactions.outerjoin(hands_table, h.id == hand_id))
        .where(
            t.kind.in_(HAND_KINDS),
            (h.id.is_(None)) | (t.reference.is_(None)) | (t.reference != HAND_REFERENCE),
        )
        .order_by(t.seq)
    ).all()
    return ReferencesCheck(
        tuple(
            CasinoProblem(
                "ledger_transactions",
                int(txn_id),
                CasinoCode.UNKNOWN_HAND,
                f"{kind} transaction {txn_id} (seq {seq}) references {named!r}, "
                "which is no hand: the hand row was deleted or the reference altered",
            )
            for txn_id, seq, kind, named in rows
        )
    )


@dataclass(frozen=True, slots=True)
class VerifierSections:
    """The verifier's report, its problems grouped by the check that found them."""

    hash_chain: HashChainCheck
    trial_balance: TrialBalanceCheck
    stored_balances: StoredBalancesCheck
    other_problems: tuple[LedgerProblem, ...]  # found by a check with no section here


def verifier_sections(report: LedgerReport) -> VerifierSections:
    """Each problem under the check `ledger.verify` says found it (`CHECK_OF`)."""
    grouped: dict[LedgerCheck, list[LedgerProblem]] = {check: [] for check in LedgerCheck}
    for problem in report.problems:
        grouped[CHECK_OF[problem.code]].append(problem)
    return VerifierSections(
        HashChainCheck(
            report.transactions_checked, report.heads, tuple(grouped.pop(LedgerCheck.HASH_CHAIN))
        ),
        TrialBalanceCheck(
            report.entries_checked,
            dict(report.trial_balance),
            tuple(grouped.pop(LedgerCheck.TRIAL_BALANCE)),
        ),
        StoredBalancesCheck(
            report.accounts_checked, tuple(grouped.pop(LedgerCheck.STORED_BALANCES))
        ),
        tuple(p for p in report.problems if CHECK_OF[p.code] in grouped),
    )


def audit_ledger(
    session_or_connection: Session | Connection,
    on_progress: Callable[[int], None] | None = None,
) -> LedgerAudit:
    """The whole-database checks: `verify_ledger`, money held, hand references, and nonce
    continuity (hands deleted together with their ledger transactions)."""
    connection = connection_of(session_or_connection)
    verified = verifier_sections(verify_ledger(connection, on_progress=on_progress))
    return LedgerAudit(
        hash_chain=verified.hash_chain,
        trial_balance=verified.trial_balance,
        stored_balances=verified.stored_balances,
        held_for_unsettled_hands=check_held(connection),
        hand_references=check_hand_references(connection),
        nonce_continuity=check_nonce_continuity(connection),
        other_problems=verified.other_problems,
    )


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
    return PeriodAudit(Period(start, end), hands, audit_ledger(connection, on_ledger))
