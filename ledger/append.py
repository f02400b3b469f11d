"""Appending a batch of transactions to the ledger: the one path by which money moves.

Inside the caller's database transaction, in an order that keeps concurrent postings from
deadlocking and from passing each other: the batch's accounts are read and checked, their
balances moved (each limit checked by the UPDATE itself), then the chain's head locked, the
idempotency keys looked up, and the batch inserted after the head. A batch posted before
comes back as its originals, marked replayed, and moves nothing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any, cast

from sqlalchemy import Connection, CursorResult, Row, bindparam, insert, select, update

from ledger.batch import (
    Account,
    BalanceMove,
    Link,
    Linked,
    Pending,
    balance_moves,
    check_currencies,
    link,
)
from ledger.errors import (
    AmountTooLarge,
    IdempotencyConflict,
    InvalidTransaction,
    LimitExceeded,
    UnknownAccount,
)
from ledger.model import Entry, PostedTransaction
from ledger.schema import accounts, chain_head, entries, transactions

# Posting is on the hot path of every hand: its statements are built once, with bound
# parameters, rather than rebuilt (and re-coerced) by SQLAlchemy on every call.
_TRANSACTIONS_BY_KEYS = select(transactions).where(
    transactions.c.idempotency_key.in_(bindparam("keys", expanding=True))
)
_ACCOUNTS_BY_CODE = select(
    accounts.c.id, accounts.c.code, accounts.c.currency, accounts.c.side
).where(accounts.c.code.in_(bindparam("codes", expanding=True)))
# The limit is checked in the UPDATE itself, at the lowest point the balance reaches: on
# PostgreSQL the row lock makes a concurrent UPDATE wait and re-evaluate the WHERE clause
# against the new balance.
_MOVE_BALANCE = (
    update(accounts)
    .where(
        accounts.c.id == bindparam("account_id"),
        # The 64-bit bounds: the balance before the move against bounds computed in Python,
        # so that no sum in SQL can overflow.
        accounts.c.balance <= bindparam("ceiling"),
        accounts.c.balance >= bindparam("floor"),
        accounts.c.min_balance.is_(None)
        | (accounts.c.balance + bindparam("lowest") >= accounts.c.min_balance),
    )
    .values(balance=accounts.c.balance + bindparam("delta"))
)
_BALANCE = select(accounts.c.balance).where(accounts.c.id == bindparam("account_id"))
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


def append(
    connection: Connection, pendings: Sequence[Pending], chain: int, posted_at: datetime
) -> list[PostedTransaction]:
    """Post the batch as the next links of `chain`, or return its originals if it was
    posted before; a refusal leaves every balance as it was."""
    by_code = _accounts(connection, pendings)
    applied: list[BalanceMove] = []
    for move in balance_moves(pendings, by_code):
        moved = cast(
            CursorResult[Any],
            connection.execute(
                _MOVE_BALANCE,
                {
                    "account_id": move.account_id,
                    "delta": move.delta,
                    "lowest": move.lowest,
                    "ceiling": move.ceiling,
                    "floor": move.floor,
                },
            ),
        )
        if moved.rowcount != 1:
            _undo(connection, applied)
            # A retry of a posting that emptied the account is a replay, not a refusal.
            found = _posted_before(connection, pendings)
            if not found:
                raise _refusal(connection, move)
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
    linked = link(pendings, by_code, posted_at, Link(chain, int(head.seq), head.hash))
    return _insert(connection, linked, by_code, posted_at, chain)


def _refusal(connection: Connection, move: BalanceMove) -> LimitExceeded | AmountTooLarge:
    balance = connection.execute(_BALANCE, {"account_id": move.account_id}).scalar_one()
    if not move.floor <= int(balance) <= move.ceiling:
        return AmountTooLarge(move.code)
    return LimitExceeded(move.code)


def _insert(
    connection: Connection,
    linked: Sequence[Linked],
    by_code: Mapping[str, Account],
    posted_at: datetime,
    chain: int,
) -> list[PostedTransaction]:
    """Write the linked batch: one insert per table, then the chain head moved to its end."""
    rows = [
        {
            "seq": txn.seq,
            "chain": chain,
            "kind": txn.pending.kind,
            "reference": txn.pending.reference,
            "idempotency_key": txn.pending.idempotency_key,
            "request_hash": txn.pending.fingerprint,
            "metadata": txn.pending.metadata,
            "posted_at": posted_at,
            "prev_hash": txn.prev_hash,
            "hash": txn.hash,
        }
        for txn in linked
    ]
    # Ids are matched back by seq: asking the database for RETURNING in parameter order
    # would make SQLAlchemy insert row by row on SQLite.
    id_by_seq = {row.seq: int(row.id) for row in connection.execute(_INSERT_TRANSACTIONS, rows)}
    ids = [id_by_seq[txn.seq] for txn in linked]
    connection.execute(
        _INSERT_ENTRIES,
        [
            {
                "transaction_id": transaction_id,
                "account_id": by_code[entry.account].id,
                "currency": entry.currency,
                "amount": entry.amount,
            }
            for transaction_id, txn in zip(ids, linked, strict=True)
            for entry in txn.entries
        ],
    )
    last = linked[-1]
    connection.execute(
        _MOVE_CHAIN_HEAD, {"chain": chain, "new_seq": last.seq, "new_hash": last.hash}
    )
    return [
        PostedTransaction(
            id=transaction_id,
            seq=txn.seq,
            kind=txn.pending.kind,
            reference=txn.pending.reference,
            metadata=txn.pending.metadata,
            posted_at=posted_at,
            entries=txn.entries,
            hash=txn.hash,
            replayed=False,
            idempotency_key=txn.pending.idempotency_key,
            chain=chain,
        )
        for transaction_id, txn in zip(ids, linked, strict=True)
    ]


def _posted_before(connection: Connection, pendings: Sequence[Pending]) -> dict[str, Row[Any]]:
    """The batch's transactions already in the ledger, by idempotency key."""
    keys = [pending.idempotency_key for pending in pendings]
    return {
        row.idempotency_key: row
        for row in connection.execute(_TRANSACTIONS_BY_KEYS, {"keys": keys})
    }


def _replays(
    connection: Connection, pendings: Sequence[Pending], found: Mapping[str, Row[Any]]
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
        posted_from_row(connection, found[pending.idempotency_key], replayed=True)
        for pending in pendings
    ]


def _undo(connection: Connection, applied: Sequence[BalanceMove]) -> None:
    """Take back balance changes already made by a refused posting (we hold their locks)."""
    for move in applied:
        connection.execute(_TAKE_BACK_BALANCE, {"account_id": move.account_id, "delta": move.delta})


def posted_from_row(connection: Connection, row: Row[Any], *, replayed: bool) -> PostedTransaction:
    """A transaction as recorded, from its row and its entries."""
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


def _accounts(connection: Connection, pendings: Sequence[Pending]) -> dict[str, Account]:
    """The accounts the batch moves, by code; raises if one was never opened or if a
    transfer crosses currencies."""
    codes = sorted({code for pending in pendings for code, _ in pending.legs})
    by_code = {
        row.code: Account(row.id, row.currency, row.side)
        for row in connection.execute(_ACCOUNTS_BY_CODE, {"codes": codes})
    }
    missing = set(codes) - by_code.keys()
    if missing:
        raise UnknownAccount(*missing)
    check_currencies(pendings, by_code)
    return by_code
