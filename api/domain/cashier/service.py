"""Deposits and withdrawals: money entering and leaving the casino through the cashier."""

import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Literal

from sqlalchemy.orm import Session

from api.db.memo import Memo, memo
from api.domain.players.service import offered_currencies
from api.domain.players.turn import ReadAfterLock, lock_player_on, take_read
from api.domain.protection.checks import refuse_deposit
from api.domain.protection.policy import ProtectionPolicy
from api.errors import Refused
from ledger import chart
from ledger.chains import chain_for
from ledger.driver import driver_of
from ledger.errors import LimitExceeded
from ledger.fresh import LockedChain, post_new, read_balance
from ledger.model import TransactionRequest, Transfer

DEFAULT_POLICY = ProtectionPolicy()


@dataclass(frozen=True, slots=True)
class Receipt:
    """A cash movement as posted: the ledger transaction and the wallet after it."""

    transaction_id: int
    player_id: int
    amount: int
    currency: str
    balance_after: int


def _check_currency(session: Session, known: Memo, currency: str, default_currency: str) -> None:
    """Only currencies the casino deals in; one found once is remembered, since tables are
    never deleted (one not found is looked up again: a table may have been created since)."""
    if currency in known.currencies:
        return
    offered = offered_currencies(session, default_currency)
    if currency not in offered:
        raise Refused(
            "currency_mismatch",
            f"{currency} is not dealt here (offered: {', '.join(offered)})",
        )
    known.currencies.add(currency)


def _move(
    session: Session,
    *,
    kind: Literal["deposit", "withdrawal"],
    player_id: int,
    amount: int,
    currency: str,
    default_currency: str,
    policy: ProtectionPolicy,
    actor_token_id: int | None,
) -> Receipt:
    """One cash movement: refusals decided first (the player, the currency, the wallet's
    balance for a withdrawal, a protected player's exclusion and deposit limits), then one
    ledger transaction on the player's chain. Withdrawals are never barred by protection."""
    driver = driver_of(session)
    known = memo(session)
    protected = lock_player_on(driver, player_id)
    _check_currency(session, known, currency, default_currency)
    if protected and kind == "deposit":
        refuse_deposit(session, player_id, currency, amount, policy)
    chain = chain_for(str(player_id))
    wallet = chart.wallet(str(player_id), currency)
    cashier = chart.cashier(currency, chain)
    _, answer = take_read(driver, _locks_read(wallet.code))
    locked = LockedChain.read(answer)
    before = locked.balances[wallet.code] if locked else read_balance(driver, wallet.code)
    if kind == "withdrawal" and before < amount:
        raise LimitExceeded(wallet.code)
    rows = known.accounts.opening(session, driver, (wallet, cashier))
    transfer = (
        Transfer(debit=cashier.code, credit=wallet.code, amount=amount)
        if kind == "deposit"
        else Transfer(debit=wallet.code, credit=cashier.code, amount=amount)
    )
    request = TransactionRequest(
        kind=kind,
        idempotency_key=f"{kind}:{uuid.uuid4()}",  # new by construction
        transfers=(transfer,),
        reference=f"player:{player_id}",
        # Hashed into the ledger's chain: who moved the money cannot be changed afterwards.
        metadata={} if actor_token_id is None else {"actor_token_id": actor_token_id},
    )
    [transaction_id] = post_new(
        driver, [request], rows, chain=chain, posted_at=datetime.now(UTC), locked=locked
    )
    after = before + amount if kind == "deposit" else before - amount
    return Receipt(transaction_id, player_id, amount, currency, after)


def opening_after_lock(session: Session, player_id: int, currency: str) -> ReadAfterLock | None:
    """PostgreSQL: a deposit's or a withdrawal's posting locks (its wallet and its chain's
    cashier account, their balances read, then the chain's head and the transaction's id),
    for the statement that locks the player's row to run (`api.http.idempotency.PlayersTurn`),
    by the function of migration `0014_opening_locks_the_chain`. Where the wallet or the
    cashier account is not open yet it locks no head: the balance is then read, and the
    posting locks, as it goes."""
    if not driver_of(session).is_postgresql:
        return None
    chain = chain_for(str(player_id))
    wallet = chart.wallet(str(player_id), currency).code
    cashier = chart.cashier(currency, chain).code
    parameters = {"chain": chain, "wallet": wallet, "cashier": cashier}
    return ReadAfterLock(_locks_read(wallet), _LOCKS_CALL, parameters)


_LOCKS_CALL = "ledger_posting_locks(:chain, 1, :wallet, :cashier)"


def _locks_read(code: str) -> tuple[str, str]:
    """Where the unit of work notes the posting locks that the lock's statement took."""
    return ("api.domain.cashier.service.locks", code)


def deposit(
    session: Session,
    player_id: int,
    amount: int,
    currency: str,
    default_currency: str,
    policy: ProtectionPolicy = DEFAULT_POLICY,
    actor_token_id: int | None = None,
) -> Receipt:
    return _move(
        session,
        kind="deposit",
        player_id=player_id,
        amount=amount,
        currency=currency,
        default_currency=default_currency,
        policy=policy,
        actor_token_id=actor_token_id,
    )


def withdraw(
    session: Session,
    player_id: int,
    amount: int,
    currency: str,
    default_currency: str,
    policy: ProtectionPolicy = DEFAULT_POLICY,
    actor_token_id: int | None = None,
) -> Receipt:
    """A withdrawal beyond the balance is refused before anything is written (and the
    wallet's limit in the ledger would refuse it too)."""
    return _move(
        session,
        kind="withdrawal",
        player_id=player_id,
        amount=amount,
        currency=currency,
        default_currency=default_currency,
        policy=policy,
        actor_token_id=actor_token_id,
    )
