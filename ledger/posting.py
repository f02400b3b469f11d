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
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, cast

from sqlalchemy import Connection, CursorResult, Row, bindparam, insert, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session

from ledger.chain import canonical_json, request_fingerprint, transaction_hash
from ledger.chains import CHAINS, is_chain, next_seq
from ledger.errors import (
    AccountConflict,
    CurrencyMismatch,
    IdempotencyConflict,
    InvalidTransaction,
    LimitExceeded,
    UnknownAccount,
    UnknownTransaction,
)
from ledger.model import (
    AccountSpec,
    Entry,
    PostedTransaction,
    Side,
    TransactionRequest,
    check_transaction,
)
from ledger.schema import accounts, chain_head, entries, transactions

REVERSAL_KIND = "reversal"

# Posting is on the hot path of every hand: its statements are built once, with bound
# parameters, rather than rebuilt (and re-coerced) by SQLAlchemy on every call.
_TRANSACTIONS_BY_KEYS = select(transactions).where(
    transactions.c.idempotency_key.in_(bindparam("keys", expanding=True))
)
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
# The limit is checked in the UPDATE itself, at the lowest point the balance reaches: on
# PostgreSQL the row lock makes a concurrent UPDATE wait and re-evaluate the WHERE clause
# against the new balance.
_MOVE_BALANCE = (
    update(accounts)
    .where(
        accounts.c.id == bindparam("account_id"),
        accounts.c.min_balance.is_(None)
        | (accounts.c.balance + bindparam("lowest") >= accounts.c.min_balance),
    )
    .values(balance=accounts.c.balance + bindparam("delta"))
)
_TAKE_BACK_BALANCE = (
    update(accounts)
    .where(accounts.c.id == bindparam("account_id"))
    .values(balance=accounts.c.balance - bindparam("delta"))
)
_LOCK_CHAIN_HEAD = (
    select(chain_head.c.seq, chain_head.c.hash)
    .where(chain_head.c.id == bindparam("chain"))
    .with_for_update()
)
_MOVE_CHAIN_HEAD = (
    update(chain_head)
    .where(chain_head.c.id == bindparam("chain"))
    .values(seq=bindparam("new_seq"), hash=bindparam("new_hash"))
)
# Keys are checked while the chain's head is locked, so the inserts cannot collide with a
# posting of the same keys on the same chain; the transactions of a batch go in one
# multi-row INSERT.
_INSERT_TRANSACTIONS = insert(transactions).returning(transactions.c.seq, transactions.c.id)
_INSERT_ENTRIES = insert(entries)
_AccountRow = Row[int, str, str, str]  # id, code, currency, side


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
    """Lock accounts, in id order, for a unit of work that must know their balances before
    it posts (a hand records the wallet's balance before it is dealt).

    Posting locks its accounts and then the chain head; accounts locked here must therefore
    be taken before any posting in the same database transaction, or a later posting would
    take account locks while holding the head and could deadlock against other writers.
    Lock only what the caller needs: a row locked here stays locked until commit. (On
    SQLite, BEGIN IMMEDIATE already serialises writers.)

    Returns the normal-side balances of the accounts found (absent ones are not opened);
    with the accounts locked they stay true until the caller's own postings.
    """
    rows = session.execute(_LOCK_ACCOUNTS, {"codes": sorted(set(codes))}).all()
    return {row.code: int(row.balance) for row in rows}


def post(
    session: Session,
    request: TransactionRequest,
    *,
    chain: int = 1,
    now: datetime | None = None,
) -> PostedTransaction:
    """Post all of the request's transfers atomically, inside the caller's transaction,
    as the next link of `chain` (see ledger.chains: callers pick it with `chain_for`).

    The same idempotency key with the same content returns the original transaction with
    `replayed=True` and moves nothing; with different content it raises
    IdempotencyConflict. A refused request leaves every balance as it was.
    """
    return post_all(session, [request], chain=chain, now=now)[0]


def post_all(
    session: Session,
    requests: Sequence[TransactionRequest],
    *,
    chain: int = 1,
    now: datetime | None = None,
) -> list[PostedTransaction]:
    """Post several transactions, in order, as one unit: all of them or none.

    Each is still its own transaction in the ledger (own key, sequence number and link in
    the hash chain), so a reader cannot tell them from separate postings; what is shared is
    the work: one account look-up, one balance update per account (each limit checked
    against the lowest point the account reaches along the way), one chain-head round trip
    and one insert per table. A hand posts its stake and settlement this way.

    If every key was posted before with the same content, the originals come back with
    `replayed=True`; a batch only partly posted before is refused (InvalidTransaction).
    A key is unique in the whole ledger: reusing one on another chain is refused by the
    database, not replayed, so a caller must keep a key's chain (the casino's follows the
    player).
    """
    return _post_pending(
        session.connection(), [_pending(r) for r in requests], _chain(chain), _now(now)
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
    reversed once; retrying with the same idempotency key replays the reversal. It is posted
    on the original's chain, where the same accounts move.
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
    check_transaction(REVERSAL_KIND, idempotency_key, reference, len(original.entries))
    reversal = _Pending.of(
        kind=REVERSAL_KIND,
        idempotency_key=idempotency_key,
        reference=reference,
        metadata={"reverses": original.id, "reverses_seq": original.seq},
        legs=tuple((entry.account, -entry.amount) for entry in original.entries),
        pairs=(),
    )
    return _post_pending(session.connection(), [reversal], original.chain, _now(now))[0]


def get_transaction(session: Session, transaction_id: int) -> PostedTransaction:
    """A posted transaction with its entries, by id."""
    row = session.execute(select(transactions).where(transactions.c.id == transaction_id)).first()
    if row is None:
        raise UnknownTransaction(transaction_id)
    return _posted_from_row(session.connection(), row, replayed=False)


def transactions_for_reference(session: Session, reference: str) -> list[PostedTransaction]:
    """Every transaction posted with this reference, in posting order."""
    rows = session.execute(
        select(transactions)
        .where(transactions.c.reference == reference)
        .order_by(transactions.c.seq)
    ).all()
    connection = session.connection()
    return [_posted_from_row(connection, row, replayed=False) for row in rows]


def _posted_from_row(connection: Connection, row: Row[Any], *, replayed: bool) -> PostedTransaction:
    entry_rows = connection.execute(
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
        chain=row.chain,
    )


@dataclass(frozen=True, slots=True)
class _Pending:
    """A transaction about to be posted, checked by `check_transaction` (a request checks
    itself when built): legs signed + debit, - credit."""

    kind: str
    idempotency_key: str
    reference: str | None
    metadata: dict[str, Any]
    legs: tuple[tuple[str, int], ...]
    pairs: tuple[tuple[str, str], ...]
    fingerprint: str

    @classmethod
    def of(
        cls,
        *,
        kind: str,
        idempotency_key: str,
        reference: str | None,
        metadata: Mapping[str, Any],
        legs: tuple[tuple[str, int], ...],
        pairs: tuple[tuple[str, str], ...],
    ) -> _Pending:
        stored_metadata: dict[str, Any] = json.loads(canonical_json(dict(metadata)))
        fingerprint = request_fingerprint(
            kind=kind, reference=reference, metadata=stored_metadata, legs=legs
        )
        return cls(kind, idempotency_key, reference, stored_metadata, legs, pairs, fingerprint)


def _pending(request: TransactionRequest) -> _Pending:
    legs: list[tuple[str, int]] = []
    for transfer in request.transfers:
        legs.append((transfer.debit, transfer.amount))
        legs.append((transfer.credit, -transfer.amount))
    return _Pending.of(
        kind=request.kind,
        idempotency_key=request.idempotency_key,
        reference=request.reference,
        metadata=request.metadata,
        legs=tuple(legs),
        pairs=tuple((transfer.debit, transfer.credit) for transfer in request.transfers),
    )


@dataclass(frozen=True, slots=True)
class _BalanceMove:
    """One account's change over a whole batch, in its normal-side terms.

    `lowest` is the lowest running change along the batch (for a single transaction, the
    change itself): the limit must hold at every step, not only at the end, so a stake
    that overdraws the wallet is refused even if the settlement after it would refill it.
    """

    account_id: int
    code: str
    delta: int
    lowest: int


def _balance_moves(
    pendings: Sequence[_Pending], by_code: Mapping[str, _AccountRow]
) -> list[_BalanceMove]:
    running: dict[str, int] = defaultdict(int)
    lowest: dict[str, int] = {}
    for pending in pendings:
        for code, amount in pending.legs:
            running[code] += amount if by_code[code].side == Side.DEBIT else -amount
        for code in {code for code, _ in pending.legs}:
            lowest[code] = min(lowest.get(code, running[code]), running[code])
    moves = [
        _BalanceMove(by_code[code].id, code, running[code], lowest[code])
        for code in running
        if running[code] != 0 or lowest[code] < 0
    ]
    # In account-id order, so that concurrent postings cannot deadlock.
    return sorted(moves, key=lambda move: move.account_id)


def _validated_accounts(
    connection: Connection, pendings: Sequence[_Pending]
) -> dict[str, _AccountRow]:
    codes = sorted({code for pending in pendings for code, _ in pending.legs})
    by_code = {row.code: row for row in connection.execute(_ACCOUNTS_BY_CODE, {"codes": codes})}
    missing = set(codes) - by_code.keys()
    if missing:
        raise UnknownAccount(*missing)
    for pending in pendings:
        for debit, credit in pending.pairs:
            if by_code[debit].currency != by_code[credit].currency:
                raise CurrencyMismatch(
                    debit, credit, by_code[debit].currency, by_code[credit].currency
                )
        per_currency: dict[str, int] = defaultdict(int)
        for code, amount in pending.legs:
            per_currency[by_code[code].currency] += amount
        unbalanced = {currency: total for currency, total in per_currency.items() if total}
        if unbalanced:
            raise InvalidTransaction(f"entries do not sum to zero per currency: {unbalanced}")
    return by_code


def _chain(chain: int) -> int:
    if not is_chain(chain):
        raise InvalidTransaction(f"there is no chain {chain!r}: chains are 1 to {CHAINS}")
    return chain


def _post_pending(
    connection: Connection, pendings: Sequence[_Pending], chain: int, posted_at: datetime
) -> list[PostedTransaction]:
    by_code = _validated_accounts(connection, pendings)
    applied: list[_BalanceMove] = []
    for move in _balance_moves(pendings, by_code):
        moved = cast(
            CursorResult[Any],
            connection.execute(
                _MOVE_BALANCE,
                {"account_id": move.account_id, "delta": move.delta, "lowest": move.lowest},
            ),
        )
        if moved.rowcount != 1:
            _undo(connection, applied)
            # A retry of a posting that emptied the account is a replay, not a refusal.
            found = _posted_before(connection, pendings)
            if not found:
                raise LimitExceeded(move.code)
            return _replays(connection, pendings, found)
        applied.append(move)

    # The chain head is locked last, so that postings on a chain serialise only for the
    # inserts. While it is held no other posting on the chain can insert, so keys absent
    # now stay absent until commit.
    head = connection.execute(_LOCK_CHAIN_HEAD, {"chain": chain}).one()
    found = _posted_before(connection, pendings)
    if found:
        _undo(connection, applied)
        return _replays(connection, pendings, found)
    return _insert(connection, pendings, by_code, posted_at, _Link(chain, int(head.seq), head.hash))


@dataclass(frozen=True, slots=True)
class _Link:
    """A chain's newest link: where the next transaction attaches."""

    chain: int
    seq: int
    hash: str


def _insert(
    connection: Connection,
    pendings: Sequence[_Pending],
    by_code: Mapping[str, _AccountRow],
    posted_at: datetime,
    head: _Link,
) -> list[PostedTransaction]:
    """Append the batch to its hash chain: one insert per table, one chain-head update."""
    seq, prev_hash = head.seq, head.hash
    rows: list[dict[str, Any]] = []
    posted_entries: list[tuple[Entry, ...]] = []
    for pending in pendings:
        seq = next_seq(head.chain, seq)
        legs = tuple(Entry(code, by_code[code].currency, amount) for code, amount in pending.legs)
        digest = transaction_hash(
            seq=seq,
            kind=pending.kind,
            reference=pending.reference,
            idempotency_key=pending.idempotency_key,
            metadata=pending.metadata,
            posted_at=posted_at,
            entries=((e.account, e.currency, e.amount) for e in legs),
            prev_hash=prev_hash,
        )
        rows.append(
            {
                "seq": seq,
                "chain": head.chain,
                "kind": pending.kind,
                "reference": pending.reference,
                "idempotency_key": pending.idempotency_key,
                "request_hash": pending.fingerprint,
                "metadata": pending.metadata,
                "posted_at": posted_at,
                "prev_hash": prev_hash,
                "hash": digest,
            }
        )
        posted_entries.append(legs)
        prev_hash = digest
    # Ids are matched back by seq: asking the database for RETURNING in parameter order
    # would make SQLAlchemy insert row by row on SQLite.
    id_by_seq = {row.seq: int(row.id) for row in connection.execute(_INSERT_TRANSACTIONS, rows)}
    ids = [id_by_seq[row["seq"]] for row in rows]
    connection.execute(
        _INSERT_ENTRIES,
        [
            {
                "transaction_id": transaction_id,
                "account_id": by_code[entry.account].id,
                "currency": entry.currency,
                "amount": entry.amount,
            }
            for transaction_id, legs in zip(ids, posted_entries, strict=True)
            for entry in legs
        ],
    )
    connection.execute(
        _MOVE_CHAIN_HEAD, {"chain": head.chain, "new_seq": seq, "new_hash": prev_hash}
    )
    return [
        PostedTransaction(
            id=transaction_id,
            seq=row["seq"],
            kind=pending.kind,
            reference=pending.reference,
            metadata=pending.metadata,
            posted_at=posted_at,
            entries=legs,
            hash=row["hash"],
            replayed=False,
            idempotency_key=pending.idempotency_key,
            chain=head.chain,
        )
        for transaction_id, row, pending, legs in zip(
            ids, rows, pendings, posted_entries, strict=True
        )
    ]


def _posted_before(connection: Connection, pendings: Sequence[_Pending]) -> dict[str, Row[Any]]:
    """The batch's transactions already in the ledger, by idempotency key."""
    keys = [pending.idempotency_key for pending in pendings]
    return {
        row.idempotency_key: row
        for row in connection.execute(_TRANSACTIONS_BY_KEYS, {"keys": keys})
    }


def _replays(
    connection: Connection, pendings: Sequence[_Pending], found: Mapping[str, Row[Any]]
) -> list[PostedTransaction]:
    """The originals of a batch posted before; raises if a key was used for other content,
    or if only part of the batch exists."""
    for pending in pendings:
        row = found.get(pending.idempotency_key)
        if row is not None and row.request_hash != pending.fingerprint:
            raise IdempotencyConflict(pending.idempotency_key)
    if len(found) < len({pending.idempotency_key for pending in pendings}):
        raise InvalidTransaction("part of this batch of transactions was posted before")
    return [
        _posted_from_row(connection, found[pending.idempotency_key], replayed=True)
        for pending in pendings
    ]


def _undo(connection: Connection, applied: Sequence[_BalanceMove]) -> None:
    """Take back balance changes already made by a refused posting (we hold their locks)."""
    for move in applied:
        connection.execute(_TAKE_BACK_BALANCE, {"account_id": move.account_id, "delta": move.delta})
