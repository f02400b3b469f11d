"""Opening accounts, posting transactions, reversing them, and reading balances.

Everything here runs inside the caller's transaction and never commits: the caller
commits its own records (a hand, an idempotency record) and the ledger together, or
rolls everything back. Statements are SQLAlchemy Core so posting costs a handful of
round trips, not an ORM flush.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any, cast

from sqlalchemy import CursorResult, Row, bindparam, insert, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session

from ledger.chain import canonical_json, request_fingerprint, transaction_hash
from ledger.errors import (
    AccountConflict,
    CurrencyMismatch,
    IdempotencyConflict,
    InvalidTransaction,
    LimitExceeded,
    UnknownAccount,
    UnknownTransaction,
)
from ledger.model import AccountSpec, Entry, PostedTransaction, Side, TransactionRequest
from ledger.schema import accounts, chain_head, entries, transactions

REVERSAL_KIND = "reversal"

# Posting is on the hot path of every hand: its statements are built once, with bound
# parameters, rather than rebuilt (and re-coerced) by SQLAlchemy on every call.
_TRANSACTION_BY_KEY = select(transactions).where(transactions.c.idempotency_key == bindparam("key"))
_ACCOUNTS_BY_CODE = select(
    accounts.c.id, accounts.c.code, accounts.c.currency, accounts.c.side
).where(accounts.c.code.in_(bindparam("codes", expanding=True)))
_LOCK_ACCOUNTS = (
    select(accounts.c.code, accounts.c.balance)
    .where(accounts.c.code.in_(bindparam("codes", expanding=True)))
    .order_by(accounts.c.id)
    .with_for_update()
)
_BALANCES = select(accounts.c.code, accounts.c.balance).where(
    accounts.c.code.in_(bindparam("codes", expanding=True))
)
# The limit is checked in the UPDATE itself: on PostgreSQL the row lock makes a concurrent
# UPDATE wait and re-evaluate the WHERE clause against the new balance.
_MOVE_BALANCE = (
    update(accounts)
    .where(
        accounts.c.id == bindparam("account_id"),
        accounts.c.min_balance.is_(None)
        | (accounts.c.balance + bindparam("delta") >= accounts.c.min_balance),
    )
    .values(balance=accounts.c.balance + bindparam("delta"))
)
_TAKE_BACK_BALANCE = (
    update(accounts)
    .where(accounts.c.id == bindparam("account_id"))
    .values(balance=accounts.c.balance - bindparam("delta"))
)
_LOCK_CHAIN_HEAD = (
    select(chain_head.c.seq, chain_head.c.hash).where(chain_head.c.id == 1).with_for_update()
)
_MOVE_CHAIN_HEAD = (
    update(chain_head)
    .where(chain_head.c.id == 1)
    .values(seq=bindparam("new_seq"), hash=bindparam("new_hash"))
)
# The unique idempotency key decides at the insert: no look-up beforehand on the hot path.
_INSERT_TRANSACTION = {
    name: dialect.insert(transactions)
    .on_conflict_do_nothing(index_elements=[transactions.c.idempotency_key])
    .returning(transactions.c.id)
    for name, dialect in (("postgresql", postgresql), ("sqlite", sqlite))
}
_INSERT_ENTRIES = insert(entries)


def _now(now: datetime | None) -> datetime:
    moment = datetime.now(UTC) if now is None else now
    if moment.tzinfo is None:
        raise InvalidTransaction("`now` must be timezone-aware")
    return moment.astimezone(UTC)


def _dialect(session: Session) -> str:
    return session.get_bind().dialect.name


def open_account(session: Session, spec: AccountSpec, *, now: datetime | None = None) -> None:
    """Open an account, or do nothing if it is already open with the same spec.

    Race-safe: `INSERT ... ON CONFLICT DO NOTHING` lets two requests open the same wallet
    at once; the loser sees the winner's row and compares specs.
    """
    if spec.min_balance is not None and spec.min_balance > 0:
        raise InvalidTransaction("an account opens at zero, so min_balance cannot exceed 0")
    values = {
        "code": spec.code,
        "currency": spec.currency,
        "side": spec.side.value,
        "min_balance": spec.min_balance,
        "balance": 0,
        "created_at": _now(now),
    }
    dialect_insert = postgresql.insert if _dialect(session) == "postgresql" else sqlite.insert
    statement = (
        dialect_insert(accounts)
        .values(values)
        .on_conflict_do_nothing(index_elements=[accounts.c.code])
    )
    result = cast(CursorResult[Any], session.execute(statement))
    if result.rowcount == 1:
        return
    row = session.execute(
        select(accounts.c.currency, accounts.c.side, accounts.c.min_balance).where(
            accounts.c.code == spec.code
        )
    ).one()
    if (row.currency, row.side, row.min_balance) != (
        spec.currency,
        spec.side.value,
        spec.min_balance,
    ):
        raise AccountConflict(spec.code)


def balance(session: Session, code: str) -> int:
    """The account's normal-side balance, read from the stored running balance."""
    value = session.execute(
        select(accounts.c.balance).where(accounts.c.code == code)
    ).scalar_one_or_none()
    if value is None:
        raise UnknownAccount(code)
    return int(value)


def balances(session: Session, codes: Iterable[str]) -> dict[str, int]:
    """Normal-side balances of several accounts in one query.

    Accounts that were never opened are absent from the result (a player who never
    deposited has no wallet yet), so callers choose their default: `.get(code, 0)`.
    """
    wanted = sorted(set(codes))
    if not wanted:
        return {}
    rows = session.execute(_BALANCES, {"codes": wanted}).all()
    return {row.code: int(row.balance) for row in rows}


def lock_accounts(session: Session, codes: Iterable[str]) -> dict[str, int]:
    """Lock accounts, in id order, before a unit of work that posts more than once.

    `post` locks its accounts and then the chain head. A second `post` in the same database
    transaction would take account locks while holding the head, which can deadlock against
    other writers; locking every account up front keeps the order accounts -> chain head for
    the whole transaction. (On SQLite, BEGIN IMMEDIATE already serialises writers.)

    Returns the normal-side balances of the accounts found (absent ones are not opened);
    with the accounts locked they stay true until the caller's own postings.
    """
    rows = session.execute(_LOCK_ACCOUNTS, {"codes": sorted(set(codes))}).all()
    return {row.code: int(row.balance) for row in rows}


def post(
    session: Session, request: TransactionRequest, *, now: datetime | None = None
) -> PostedTransaction:
    """Post all of the request's transfers atomically, inside the caller's transaction.

    The same idempotency key with the same content returns the original transaction with
    `replayed=True` and moves nothing; with different content it raises
    IdempotencyConflict. A refused request leaves every balance as it was.
    """
    legs: list[tuple[str, int]] = []
    for transfer in request.transfers:
        legs.append((transfer.debit, transfer.amount))
        legs.append((transfer.credit, -transfer.amount))
    return _post_legs(
        session,
        kind=request.kind,
        idempotency_key=request.idempotency_key,
        reference=request.reference,
        metadata=request.metadata,
        legs=legs,
        pairs=[(transfer.debit, transfer.credit) for transfer in request.transfers],
        now=now,
    )


def reverse(
    session: Session,
    transaction_id: int,
    idempotency_key: str,
    *,
    now: datetime | None = None,
) -> PostedTransaction:
    """Correct a transaction by posting its mirror image (kind `reversal`).

    The original stays untouched: the ledger is append-only. The reversal's reference is
    `reversal:<original id>` and its metadata names the original. A transaction can be
    reversed once; retrying with the same idempotency key replays the reversal.
    """
    original = get_transaction(session, transaction_id)
    reference = f"reversal:{original.id}"
    earlier = session.execute(
        select(transactions.c.id, transactions.c.idempotency_key).where(
            transactions.c.reference == reference, transactions.c.kind == REVERSAL_KIND
        )
    ).first()
    if earlier is not None and earlier.idempotency_key != idempotency_key:
        raise InvalidTransaction(
            f"transaction {original.id} was already reversed by transaction {earlier.id}"
        )
    if not idempotency_key or len(idempotency_key) > 255:
        raise InvalidTransaction("an idempotency key has 1 to 255 characters")
    return _post_legs(
        session,
        kind=REVERSAL_KIND,
        idempotency_key=idempotency_key,
        reference=reference,
        metadata={"reverses": original.id, "reverses_seq": original.seq},
        legs=[(entry.account, -entry.amount) for entry in original.entries],
        pairs=[],
        now=now,
    )


def get_transaction(session: Session, transaction_id: int) -> PostedTransaction:
    """A posted transaction with its entries, by id."""
    row = session.execute(select(transactions).where(transactions.c.id == transaction_id)).first()
    if row is None:
        raise UnknownTransaction(transaction_id)
    return _posted_from_row(session, row, replayed=False)


def transactions_for_reference(session: Session, reference: str) -> list[PostedTransaction]:
    """Every transaction posted with this reference, in posting order."""
    rows = session.execute(
        select(transactions)
        .where(transactions.c.reference == reference)
        .order_by(transactions.c.seq)
    ).all()
    return [_posted_from_row(session, row, replayed=False) for row in rows]


def _posted_from_row(session: Session, row: Row[Any], *, replayed: bool) -> PostedTransaction:
    entry_rows = session.execute(
        select(accounts.c.code, entries.c.currency, entries.c.amount)
        .join(accounts, accounts.c.id == entries.c.account_id)
        .where(entries.c.transaction_id == row.id)
        .order_by(entries.c.id)
    ).all()
    return PostedTransaction(
        id=row.id,
        seq=row.seq,
        kind=row.kind,
        reference=row.reference,
        metadata=row.metadata,
        posted_at=row.posted_at,
        entries=tuple(Entry(e.code, e.currency, int(e.amount)) for e in entry_rows),
        hash=row.hash,
        replayed=replayed,
        idempotency_key=row.idempotency_key,
    )


def _existing(session: Session, idempotency_key: str, fingerprint: str) -> PostedTransaction | None:
    row = session.execute(_TRANSACTION_BY_KEY, {"key": idempotency_key}).first()
    if row is None:
        return None
    if row.request_hash != fingerprint:
        raise IdempotencyConflict(idempotency_key)
    return _posted_from_row(session, row, replayed=True)


def _post_legs(
    session: Session,
    *,
    kind: str,
    idempotency_key: str,
    reference: str | None,
    metadata: Mapping[str, Any],
    legs: Sequence[tuple[str, int]],
    pairs: Sequence[tuple[str, str]],
    now: datetime | None,
) -> PostedTransaction:
    if not legs:
        raise InvalidTransaction("a transaction needs at least one transfer")
    stored_metadata: dict[str, Any] = json.loads(canonical_json(dict(metadata)))
    posted_at = _now(now)
    fingerprint = request_fingerprint(
        kind=kind, reference=reference, metadata=stored_metadata, legs=legs
    )

    codes = sorted({code for code, _ in legs})
    rows = session.execute(_ACCOUNTS_BY_CODE, {"codes": codes}).all()
    by_code = {row.code: row for row in rows}
    missing = set(codes) - by_code.keys()
    if missing:
        raise UnknownAccount(*missing)
    for debit, credit in pairs:
        if by_code[debit].currency != by_code[credit].currency:
            raise CurrencyMismatch(debit, credit, by_code[debit].currency, by_code[credit].currency)
    per_currency: dict[str, int] = defaultdict(int)
    per_account: dict[str, int] = defaultdict(int)
    for code, amount in legs:
        per_currency[by_code[code].currency] += amount
        per_account[code] += amount
    unbalanced = {currency: total for currency, total in per_currency.items() if total}
    if unbalanced:
        raise InvalidTransaction(f"entries do not sum to zero per currency: {unbalanced}")

    # Balance changes, in account-id order so that concurrent postings cannot deadlock.
    applied: list[tuple[int, int]] = []
    for code in sorted(per_account, key=lambda c: by_code[c].id):
        account = by_code[code]
        delta = per_account[code] if account.side == Side.DEBIT else -per_account[code]
        if delta == 0:
            continue
        result = cast(
            CursorResult[Any],
            session.execute(_MOVE_BALANCE, {"account_id": account.id, "delta": delta}),
        )
        if result.rowcount != 1:
            _undo(session, applied)
            # A retry of a posting that emptied the account is a replay, not a refusal.
            replay = _existing(session, idempotency_key, fingerprint)
            if replay is not None:
                return replay
            raise LimitExceeded(code)
        applied.append((account.id, delta))

    # The chain head is locked last, so that postings serialise only for the inserts.
    head = session.execute(_LOCK_CHAIN_HEAD).one()

    seq = int(head.seq) + 1
    posted_entries = tuple(Entry(code, by_code[code].currency, amount) for code, amount in legs)
    digest = transaction_hash(
        seq=seq,
        kind=kind,
        reference=reference,
        idempotency_key=idempotency_key,
        metadata=stored_metadata,
        posted_at=posted_at,
        entries=((e.account, e.currency, e.amount) for e in posted_entries),
        prev_hash=head.hash,
    )
    transaction_id = session.execute(
        _INSERT_TRANSACTION[_dialect(session)],
        {
            "seq": seq,
            "kind": kind,
            "reference": reference,
            "idempotency_key": idempotency_key,
            "request_hash": fingerprint,
            "metadata": stored_metadata,
            "posted_at": posted_at,
            "prev_hash": head.hash,
            "hash": digest,
        },
    ).scalar_one_or_none()
    if transaction_id is None:
        # The key is taken (a retry, or a concurrent twin that committed first): take the
        # balance changes back and answer with the original, or refuse a different content.
        _undo(session, applied)
        replay = _existing(session, idempotency_key, fingerprint)
        if replay is None:
            raise InvalidTransaction(f"idempotency key {idempotency_key!r} is taken")
        return replay
    session.execute(
        _INSERT_ENTRIES,
        [
            {
                "transaction_id": transaction_id,
                "account_id": by_code[entry.account].id,
                "currency": entry.currency,
                "amount": entry.amount,
            }
            for entry in posted_entries
        ],
    )
    session.execute(_MOVE_CHAIN_HEAD, {"new_seq": seq, "new_hash": digest})
    return PostedTransaction(
        id=int(transaction_id),
        seq=seq,
        kind=kind,
        reference=reference,
        metadata=stored_metadata,
        posted_at=posted_at,
        entries=posted_entries,
        hash=digest,
        replayed=False,
        idempotency_key=idempotency_key,
    )


def _undo(session: Session, applied: Sequence[tuple[int, int]]) -> None:
    """Take back balance changes already made by a refused posting (we hold their locks)."""
    for account_id, delta in applied:
        session.execute(_TAKE_BACK_BALANCE, {"account_id": account_id, "delta": delta})
