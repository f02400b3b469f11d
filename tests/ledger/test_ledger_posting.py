"""Posting: balanced transactions, refusals, idempotency, limits, reversal, hash chain."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

import pytest
from freezegun import freeze_time
from sqlalchemy.orm import Session, sessionmaker

from ledger import chart
from ledger.errors import (
    AccountConflict,
    CurrencyMismatch,
    IdempotencyConflict,
    InvalidTransaction,
    LimitExceeded,
    UnknownAccount,
)
from ledger.model import (
    AccountSpec,
    Entry,
    PostedTransaction,
    Side,
    TransactionRequest,
    Transfer,
)
from ledger.posting import (
    balance,
    balances,
    get_transaction,
    open_account,
    post,
    reverse,
    transactions_for_reference,
)
from ledger.report import ChainHead
from ledger.schema import GENESIS_HASH
from ledger.verify import verify_ledger

WALLET = chart.wallet("p1", "USD").code
HELD = chart.held("p1", "USD").code
HOUSE = chart.house("USD").code
Deposit = Callable[[str, int], PostedTransaction]
CASHIER = chart.cashier("USD").code


@pytest.fixture
def accounts(session_factory: sessionmaker[Session]) -> None:
    with session_factory.begin() as session:
        for spec in (
            chart.wallet("p1", "USD"),
            chart.held("p1", "USD"),
            chart.house("USD"),
            chart.cashier("USD"),
            chart.cashier("EUR"),
        ):
            open_account(session, spec)


def _request(key: str, *transfers: Transfer, **kwargs: object) -> TransactionRequest:
    return TransactionRequest(kind="test", idempotency_key=key, transfers=transfers, **kwargs)  # type: ignore[arg-type]


@pytest.mark.usefixtures("accounts")
def test_deposit_posts_balanced_entries_and_moves_normal_side_balances(
    session_factory: sessionmaker[Session],
) -> None:
    with session_factory.begin() as session:
        posted = post(session, _request("k1", Transfer(CASHIER, WALLET, 500)))
    assert posted.entries == (Entry(CASHIER, "USD", 500), Entry(WALLET, "USD", -500))
    assert posted.seq == 1
    assert not posted.replayed
    with session_factory() as session:
        assert balances(session, [CASHIER, WALLET, HOUSE]) == {CASHIER: 500, WALLET: 500, HOUSE: 0}
        assert verify_ledger(session).ok


@pytest.mark.usefixtures("accounts")
def test_linked_transfers_post_together(session_factory: sessionmaker[Session]) -> None:
    with session_factory.begin() as session:
        post(session, _request("dep", Transfer(CASHIER, WALLET, 1000)))
        stake = post(
            session,
            _request(
                "stake-and-lose",
                Transfer(WALLET, HELD, 300),
                Transfer(HELD, HOUSE, 300),
                reference="round-7",
                metadata={"note": "lost"},
            ),
        )
    assert sum(entry.amount for entry in stake.entries) == 0
    with session_factory() as session:
        assert balances(session, [WALLET, HELD, HOUSE]) == {WALLET: 700, HELD: 0, HOUSE: 300}
        [found] = transactions_for_reference(session, "round-7")
        assert found.metadata == {"note": "lost"}
        assert found.entries == stake.entries


def test_transfer_with_non_positive_or_self_amount_is_refused() -> None:
    with pytest.raises(InvalidTransaction):
        Transfer(CASHIER, WALLET, 0)
    with pytest.raises(InvalidTransaction):
        Transfer(CASHIER, WALLET, -5)
    with pytest.raises(InvalidTransaction):
        Transfer(WALLET, WALLET, 5)
    with pytest.raises(InvalidTransaction):
        TransactionRequest(kind="test", idempotency_key="k", transfers=())


@pytest.mark.usefixtures("accounts")
def test_currency_mismatch_is_refused_and_moves_nothing(
    session_factory: sessionmaker[Session],
) -> None:
    with session_factory.begin() as session, pytest.raises(CurrencyMismatch):
        post(session, _request("k", Transfer(chart.cashier("EUR").code, WALLET, 5)))
    with session_factory() as session:
        assert balance(session, WALLET) == 0


@pytest.mark.usefixtures("accounts")
def test_unknown_account_is_refused(session_factory: sessionmaker[Session]) -> None:
    with session_factory.begin() as session, pytest.raises(UnknownAccount, match="wallet:nobody"):
        post(session, _request("k", Transfer(CASHIER, "wallet:nobody:USD", 5)))
    with session_factory() as session:
        with pytest.raises(UnknownAccount):
            balance(session, "wallet:nobody:USD")
        assert balances(session, ["wallet:nobody:USD", WALLET]) == {WALLET: 0}


@pytest.mark.usefixtures("accounts")
def test_same_key_same_content_replays_without_moving_money(
    session_factory: sessionmaker[Session],
) -> None:
    request = _request("k1", Transfer(CASHIER, WALLET, 500), metadata={"a": 1})
    with session_factory.begin() as session:
        first = post(session, request)
    with session_factory.begin() as session:
        again = post(session, request)
    assert again.replayed
    assert (again.id, again.seq, again.hash, again.entries, again.posted_at) == (
        first.id,
        first.seq,
        first.hash,
        first.entries,
        first.posted_at,
    )
    with session_factory() as session:
        assert balance(session, WALLET) == 500


@pytest.mark.usefixtures("accounts")
def test_a_retried_posting_that_emptied_an_account_replays_rather_than_refusing(
    session_factory: sessionmaker[Session],
) -> None:
    with session_factory.begin() as session:
        post(session, _request("fund", Transfer(CASHIER, WALLET, 300)))
    drain = _request("drain", Transfer(WALLET, CASHIER, 300))
    with session_factory.begin() as session:
        first = post(session, drain)
    with session_factory.begin() as session:
        again = post(session, drain)
    assert again.replayed
    assert again.id == first.id
    with session_factory() as session:
        assert balance(session, WALLET) == 0


@pytest.mark.usefixtures("accounts")
def test_same_key_different_content_is_an_idempotency_conflict(
    session_factory: sessionmaker[Session],
) -> None:
    with session_factory.begin() as session:
        post(session, _request("k1", Transfer(CASHIER, WALLET, 500)))
    with session_factory.begin() as session, pytest.raises(IdempotencyConflict):
        post(session, _request("k1", Transfer(CASHIER, WALLET, 501)))
    with session_factory() as session:
        assert balance(session, WALLET) == 500


@pytest.mark.usefixtures("accounts")
def test_debit_beyond_limit_is_refused_and_linked_transfers_are_undone(
    session_factory: sessionmaker[Session],
) -> None:
    with session_factory.begin() as session:
        post(session, _request("dep", Transfer(CASHIER, WALLET, 100)))
    with session_factory.begin() as session:
        # The first transfer alone would fit; the second takes the wallet below zero.
        with pytest.raises(LimitExceeded) as refused:
            post(
                session,
                _request("bad", Transfer(WALLET, HELD, 60), Transfer(WALLET, HOUSE, 60)),
            )
        assert refused.value.account == WALLET
        # Even uncommitted, the caller's transaction holds no trace of the refused posting.
        assert balances(session, [WALLET, HELD, HOUSE]) == {WALLET: 100, HELD: 0, HOUSE: 0}
        post(session, _request("ok", Transfer(WALLET, HELD, 100)))
    with session_factory() as session:
        assert balances(session, [WALLET, HELD]) == {WALLET: 0, HELD: 100}
        assert verify_ledger(session).ok


@pytest.mark.usefixtures("accounts")
def test_unlimited_house_may_go_negative(session_factory: sessionmaker[Session]) -> None:
    with session_factory.begin() as session:
        post(session, _request("win", Transfer(HOUSE, WALLET, 900)))
    with session_factory() as session:
        assert balances(session, [HOUSE, WALLET]) == {HOUSE: -900, WALLET: 900}


@pytest.mark.usefixtures("accounts")
def test_reversal_posts_mirror_entries_once(session_factory: sessionmaker[Session]) -> None:
    with session_factory.begin() as session:
        original = post(session, _request("dep", Transfer(CASHIER, WALLET, 250)))
    with session_factory.begin() as session:
        reversal = reverse(session, original.id, "undo-dep")
    assert reversal.kind == "reversal"
    assert reversal.reference == f"reversal:{original.id}"
    assert reversal.metadata["reverses"] == original.id
    assert reversal.entries == (Entry(CASHIER, "USD", -250), Entry(WALLET, "USD", 250))
    with session_factory.begin() as session:
        assert reverse(session, original.id, "undo-dep").replayed
        with pytest.raises(InvalidTransaction, match="already reversed"):
            reverse(session, original.id, "undo-dep-again")
    with session_factory() as session:
        assert balances(session, [CASHIER, WALLET]) == {CASHIER: 0, WALLET: 0}
        assert get_transaction(session, original.id).entries == original.entries
        assert verify_ledger(session).ok


@pytest.mark.usefixtures("accounts")
@pytest.mark.parametrize("key", ["", "k" * 256])
def test_reversal_refuses_an_idempotency_key_a_request_would_refuse(
    session_factory: sessionmaker[Session], key: str
) -> None:
    with session_factory.begin() as session:
        original = post(session, _request("dep", Transfer(CASHIER, WALLET, 250)))
    with session_factory.begin() as session:
        with pytest.raises(InvalidTransaction, match="an idempotency key has 1 to 255"):
            reverse(session, original.id, key)
        with pytest.raises(InvalidTransaction, match="an idempotency key has 1 to 255"):
            TransactionRequest("dep", key, (Transfer(CASHIER, WALLET, 250),))


def test_reversal_that_would_break_a_limit_is_refused(
    session_factory: sessionmaker[Session], deposit: Deposit
) -> None:
    dep = deposit("p2", 100)
    with session_factory.begin() as session:
        open_account(session, chart.house("USD"))
        post(session, _request("spend", Transfer(chart.wallet("p2", "USD").code, HOUSE, 100)))
    with session_factory.begin() as session, pytest.raises(LimitExceeded):
        reverse(session, dep.id, "undo")


def test_open_account_is_idempotent_and_refuses_a_different_spec(
    session_factory: sessionmaker[Session],
) -> None:
    spec = AccountSpec("wallet:x:USD", "USD", Side.CREDIT, min_balance=0)
    with session_factory.begin() as session:
        open_account(session, spec)
        open_account(session, spec)
    with session_factory.begin() as session, pytest.raises(AccountConflict):
        open_account(session, AccountSpec("wallet:x:USD", "USD", Side.CREDIT))
    with session_factory() as session:
        assert balance(session, spec.code) == 0


@pytest.mark.usefixtures("accounts")
def test_transactions_form_a_hash_chain_from_genesis(
    session_factory: sessionmaker[Session],
) -> None:
    with session_factory.begin() as session:
        first = post(session, _request("a", Transfer(CASHIER, WALLET, 1)))
    with session_factory.begin() as session:
        second = post(session, _request("b", Transfer(CASHIER, WALLET, 2)))
    with session_factory() as session:
        report = verify_ledger(session)
    assert (first.seq, second.seq) == (1, 17)  # chain 1's numbers: 1 modulo 16
    assert first.hash != second.hash
    assert report.ok
    assert report.heads[0] == ChainHead(1, 17, second.hash)
    assert first.hash != GENESIS_HASH


@pytest.mark.usefixtures("accounts")
def test_posted_at_comes_from_the_clock_in_utc(session_factory: sessionmaker[Session]) -> None:
    with freeze_time("2024-03-01T12:34:56.789012Z"), session_factory.begin() as session:
        posted = post(session, _request("k", Transfer(CASHIER, WALLET, 5)))
    moment = datetime(2024, 3, 1, 12, 34, 56, 789012, tzinfo=UTC)
    assert posted.posted_at == moment
    with session_factory() as session:
        stored = get_transaction(session, posted.id)
        assert stored.posted_at == moment
        assert stored.posted_at.tzinfo is not None
        assert verify_ledger(session).ok
