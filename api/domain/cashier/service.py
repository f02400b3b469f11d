"""Deposits and withdrawals: money entering and leaving the casino through the cashier."""

import uuid
from dataclasses import dataclass
from typing import Literal

from sqlalchemy.orm import Session

from api.domain.players.service import offered_currencies
from api.domain.players.turn import lock_player
from api.errors import Refused
from ledger import chart
from ledger.chains import chain_for
from ledger.model import TransactionRequest, Transfer
from ledger.posting import balance, open_account, post


@dataclass(frozen=True, slots=True)
class Receipt:
    """A cash movement as posted: the ledger transaction and the wallet after it."""

    transaction_id: int
    player_id: int
    amount: int
    currency: str
    balance_after: int


def _check_currency(session: Session, currency: str, default_currency: str) -> None:
    offered = offered_currencies(session, default_currency)
    if currency not in offered:
        raise Refused(
            "currency_mismatch",
            f"{currency} is not dealt here (offered: {', '.join(offered)})",
        )


def _move(
    session: Session,
    *,
    kind: Literal["deposit", "withdrawal"],
    player_id: int,
    amount: int,
    currency: str,
    default_currency: str,
) -> Receipt:
    lock_player(session, player_id)
    _check_currency(session, currency, default_currency)
    chain = chain_for(str(player_id))
    wallet = chart.wallet(str(player_id), currency)
    cashier = chart.cashier(currency, chain)
    open_account(session, wallet)
    open_account(session, cashier)
    transfer = (
        Transfer(debit=cashier.code, credit=wallet.code, amount=amount)
        if kind == "deposit"
        else Transfer(debit=wallet.code, credit=cashier.code, amount=amount)
    )
    posted = post(
        session,
        TransactionRequest(
            kind=kind,
            idempotency_key=f"{kind}:{uuid.uuid4()}",
            transfers=(transfer,),
            reference=f"player:{player_id}",
        ),
        chain=chain,
    )
    return Receipt(
        transaction_id=posted.id,
        player_id=player_id,
        amount=amount,
        currency=currency,
        balance_after=balance(session, wallet.code),
    )


def deposit(
    session: Session, player_id: int, amount: int, currency: str, default_currency: str
) -> Receipt:
    return _move(
        session,
        kind="deposit",
        player_id=player_id,
        amount=amount,
        currency=currency,
        default_currency=default_currency,
    )


def withdraw(
    session: Session, player_id: int, amount: int, currency: str, default_currency: str
) -> Receipt:
    """A withdrawal beyond the balance is refused by the wallet's limit in the ledger."""
    return _move(
        session,
        kind="withdrawal",
        player_id=player_id,
        amount=amount,
        currency=currency,
        default_currency=default_currency,
    )
