"""The accounts and batches that the fresh-batch tests post (`ledger.fresh`): one player's
wallet and held money, the house and the cashier, and a hand's two transactions."""

from __future__ import annotations

from ledger import chart
from ledger.model import TransactionRequest, Transfer

WALLET = chart.wallet("p1", "USD")
HELD = chart.held("p1", "USD")
HOUSE = chart.house("USD")
CASHIER = chart.cashier("USD")
SPECS = (WALLET, HELD, HOUSE, CASHIER)


def request(key: str, *transfers: Transfer) -> TransactionRequest:
    return TransactionRequest(kind="test", idempotency_key=key, transfers=transfers)


def hand(number: int, stake: int, returned: int) -> list[TransactionRequest]:
    """A hand's stake and settlement, `returned` paid back to the wallet."""
    paid = (Transfer(HOUSE.code, WALLET.code, returned),) if returned else ()
    return [
        request(f"h{number}:stake", Transfer(WALLET.code, HELD.code, stake)),
        request(f"h{number}:settlement", Transfer(HELD.code, HOUSE.code, stake), *paid),
    ]
