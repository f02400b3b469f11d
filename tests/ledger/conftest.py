"""Helpers for ledger tests: a small chart of accounts and a funding shortcut."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from sqlalchemy.orm import Session, sessionmaker

from ledger import chart
from ledger.model import PostedTransaction, TransactionRequest, Transfer
from ledger.posting import open_account, post

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
