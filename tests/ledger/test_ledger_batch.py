"""A batch worked out before the database is written: checks, balance moves, chain links."""

from datetime import UTC, datetime

import pytest

from ledger.batch import Account, Link, Pending, balance_moves, check_currencies, link
from ledger.chains import next_seq
from ledger.errors import CurrencyMismatch
from ledger.model import Entry, TransactionRequest, Transfer
from ledger.schema import GENESIS_HASH

ACCOUNTS = {
    "house": Account(1, "USD", "credit"),
    "wallet": Account(2, "USD", "credit"),
    "cashier:EUR": Account(3, "EUR", "debit"),
}
POSTED_AT = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)


def _pending(key: str, *transfers: Transfer) -> Pending:
    return Pending.of_request(TransactionRequest("test", key, transfers))


def test_a_request_becomes_signed_legs_debit_first() -> None:
    pending = _pending("k", Transfer("wallet", "house", 100))
    assert pending.legs == (("wallet", 100), ("house", -100))
    assert pending.pairs == (("wallet", "house"),)


def test_a_transfer_between_currencies_is_refused() -> None:
    with pytest.raises(CurrencyMismatch):
        check_currencies([_pending("k", Transfer("cashier:EUR", "wallet", 100))], ACCOUNTS)


def test_balance_moves_keep_the_lowest_point_each_account_reaches_in_account_order() -> None:
    stake = _pending("stake", Transfer("wallet", "house", 100))
    settlement = _pending("settle", Transfer("house", "wallet", 250))
    moves = balance_moves([stake, settlement], ACCOUNTS)
    assert [(m.code, m.delta, m.lowest) for m in moves] == [
        ("house", -150, -150),
        ("wallet", 150, -100),
    ]


def test_each_linked_transaction_follows_the_one_before_it() -> None:
    batch = [
        _pending("a", Transfer("wallet", "house", 100)),
        _pending("b", Transfer("house", "wallet", 200)),
    ]
    first, second = link(batch, ACCOUNTS, POSTED_AT, Link(chain=1, seq=0, hash=GENESIS_HASH))
    assert first.prev_hash == GENESIS_HASH
    assert second.prev_hash == first.hash != second.hash
    assert (first.seq, second.seq) == (next_seq(1, 0), next_seq(1, next_seq(1, 0)))
    assert first.entries == (Entry("wallet", "USD", 100), Entry("house", "USD", -100))
