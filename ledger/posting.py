"""Opening accounts, posting transactions, reversing them, and reading balances.

Everything here runs inside the caller's transaction and never commits: the caller
commits its own records (a hand, an idempotency record) and the ledger together, or
rolls everything back. Statements are SQLAlchemy Core so posting costs a handful of
round trips, not an ORM flush. What a batch will do is worked out in `ledger.batch`
(pure); `ledger.append` writes it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from typing import Any, cast

from sqlalchemy import CursorResult, bindparam, select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session

from ledger.append import append, posted_from_row
from ledger.batch import Pending
from ledger.chains import CHAINS, is_chain
from ledger.errors import AccountConflict, InvalidTransaction, UnknownAccount, UnknownTransaction
from ledger.model import AccountSpec, PostedTransaction, TransactionRequest, check_transaction
from ledger.schema import accounts, transactions

REVERSAL_KIND = "reversal"

# Built once, with a bound parameter, as the append path's statements are.
_BALANCES = select(accounts.c.code, accounts.c.balance).where(
    accounts.c.code.in_(bindparam("codes", expanding=True))
)


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
    return append(
        session.connection(), [Pending.of_request(r) for r in requests], _chain(chain), _now(now)
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
    reversal = Pending.of(
        kind=REVERSAL_KIND,
        idempotency_key=idempotency_key,
        reference=reference,
        metadata={"reverses": original.id, "reverses_seq": original.seq},
        legs=tuple((entry.account, -entry.amount) for entry in original.entries),
        pairs=(),
    )
    return append(session.connection(), [reversal], original.chain, _now(now))[0]


def get_transaction(session: Session, transaction_id: int) -> PostedTransaction:
    """A posted transaction with its entries, by id."""
    row = session.execute(select(transactions).where(transactions.c.id == transaction_id)).first()
    if row is None:
        raise UnknownTransaction(transaction_id)
    return posted_from_row(session.connection(), row, replayed=False)


def transactions_for_reference(session: Session, reference: str) -> list[PostedTransaction]:
    """Every transaction posted with this reference, in posting order."""
    rows = session.execute(
        select(transactions)
        .where(transactions.c.reference == reference)
        .order_by(transactions.c.seq)
    ).all()
    connection = session.connection()
    return [posted_from_row(connection, row, replayed=False) for row in rows]


def _chain(chain: int) -> int:
    if not is_chain(chain):
        raise InvalidTransaction(f"there is no chain {chain!r}: chains are 1 to {CHAINS}")
    return chain
