"""Helpers for ledger tests: a small chart of accounts, a funding shortcut, and the book of
the fresh-batch tests' accounts."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from sqlalchemy.orm import Session, sessionmaker

from ledger import chart
from ledger.fresh import AccountBook
from ledger.model import PostedTransaction, TransactionRequest, Transfer
from ledger.posting import open_account, post
from tests.ledger.fresh_batches import CASHIER, SPECS, WALLET, request

Deposit = Callable[[str, int], PostedTransaction]


@pytest.fixture
def deposit(session_factory: sessionmaker[Session]) -> Deposit:
    """Open the player's wallet (and the cashier) and deposit `amount` USD into it."""
    counter = iter(range(1_000_000))

    def _deposit(player: str, amount: int) -> PostedTransaction:
        with session_factory.begin() as session:
            open_account(session, chart.cashier("USD"))
            open_account(session, chart.wallet(player, "USD"))
            return post(
                session,
                TransactionRequest(
                    kind="deposit",
                    idempotency_key=f"test-deposit-{player}-{next(counter)}",
                    transfers=(
                        Transfer(
                            chart.cashier("USD").code, chart.wallet(player, "USD").code, amount
                        ),
                    ),
                ),
            )

    return _deposit


@pytest.fixture
def book(session_factory: sessionmaker[Session]) -> AccountBook:
    """The fresh-batch tests' four accounts open, the wallet holding 100, and a book of
    their rows (`tests.ledger.fresh_batches`)."""
    with session_factory.begin() as session:
        for spec in SPECS:
            open_account(session, spec)
        post(session, request("fund", Transfer(CASHIER.code, WALLET.code, 100)))
    return AccountBook()
