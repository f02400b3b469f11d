"""Posting fresh batches on the driver (`ledger.fresh`): the ledger's guarantees, in fewer
statements, for keys that are new by construction."""

from __future__ import annotations

import contextlib
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import Engine, select, text
from sqlalchemy.exc import IntegrityError, OperationalError
from sqlalchemy.orm import Session, sessionmaker

from ledger import chart
from ledger.driver import Driver, Row, Sql
from ledger.errors import AccountConflict, LimitExceeded, UnknownAccount
from ledger.fresh import AccountBook, post_new, read_balance
from ledger.model import AccountSpec, Side, TransactionRequest, Transfer
from ledger.posting import balances
from ledger.schema import LedgerTransaction
from ledger.verify import verify_ledger
from tests.ledger.fresh_batches import CASHIER, HELD, HOUSE, SPECS, WALLET, hand, request
from tests.locks import until_a_backend_waits_for_a_lock


def _post(
    session_factory: sessionmaker[Session], book: AccountBook, batch: list[TransactionRequest]
) -> list[int]:
    with session_factory.begin() as session:
        return _post_in(session, book, batch)


def _post_in(session: Session, book: AccountBook, batch: list[TransactionRequest]) -> list[int]:
    driver = Driver(session.connection())
    rows = book.find(driver, [spec.code for spec in SPECS])
    return post_new(driver, batch, rows, chain=1, posted_at=datetime.now(UTC))


def test_a_fresh_batch_moves_every_balance_and_keeps_the_chain_whole(
    session_factory: sessionmaker[Session], book: AccountBook
) -> None:
    _post(session_factory, book, hand(1, 40, 80))
    with session_factory() as session:
        found = balances(session, [spec.code for spec in SPECS])
        assert found == {WALLET.code: 140, HELD.code: 0, HOUSE.code: -40, CASHIER.code: 100}
        assert verify_ledger(session).ok


def test_the_ids_come_back_in_the_batch_order(
    session_factory: sessionmaker[Session], book: AccountBook
) -> None:
    first, second = _post(session_factory, book, hand(1, 10, 0))
    assert first < second


class _CountingDriver(Driver):
    """The real driver, counting the statements it is given (sent at once or queued)."""

    statements = 0

    def execute(self, sql: Sql, parameters: Mapping[str, Any]) -> None:
        self.statements += 1
        super().execute(sql, parameters)

    def first(self, sql: Sql, parameters: Mapping[str, Any]) -> Row | None:
        self.statements += 1
        return super().first(sql, parameters)

    def all(self, sql: Sql, parameters: Mapping[str, Any]) -> Sequence[Row]:
        self.statements += 1
        return super().all(sql, parameters)


def test_a_fresh_batch_takes_five_statements_and_three_on_postgresql(
    session_factory: sessionmaker[Session], book: AccountBook
) -> None:
    with session_factory.begin() as session:
        driver = _CountingDriver(session.connection())
        rows = book.find(driver, [spec.code for spec in SPECS])
        driver.statements = 0
        post_new(driver, hand(1, 40, 80), rows, chain=1, posted_at=datetime.now(UTC))
    assert driver.statements == (3 if driver.is_postgresql else 5)
    with session_factory() as session:
        assert verify_ledger(session).ok


def test_a_batch_that_would_overdraw_is_refused_and_moves_nothing(
    session_factory: sessionmaker[Session], book: AccountBook
) -> None:
    with pytest.raises(LimitExceeded):
        _post(session_factory, book, hand(1, 101, 300))
    with session_factory() as session:
        assert balances(session, [WALLET.code])[WALLET.code] == 100
        assert verify_ledger(session).ok


def test_a_refused_batch_takes_back_what_it_moved_before_the_refusal(
    session_factory: sessionmaker[Session], book: AccountBook
) -> None:
    with session_factory.begin() as session:  # committed whatever the refusal left
        driver = Driver(session.connection())
        rows = book.find(driver, [spec.code for spec in SPECS])
        with pytest.raises(LimitExceeded):
            post_new(driver, hand(1, 101, 300), rows, chain=1, posted_at=datetime.now(UTC))
    with session_factory() as session:
        found = balances(session, [spec.code for spec in SPECS])
        assert found == {WALLET.code: 100, HELD.code: 0, HOUSE.code: 0, CASHIER.code: 100}


@pytest.mark.parametrize("database_url", ["postgresql"], indirect=True)
def test_a_refused_batch_draws_no_transaction_id_on_postgresql(
    session_factory: sessionmaker[Session], book: AccountBook
) -> None:
    _post(session_factory, book, hand(1, 10, 0))
    drawn_before = _last_transaction_id_drawn(session_factory)
    with pytest.raises(LimitExceeded):
        _post(session_factory, book, hand(2, 101, 300))
    assert _last_transaction_id_drawn(session_factory) == drawn_before


def _last_transaction_id_drawn(session_factory: sessionmaker[Session]) -> int:
    with session_factory() as session:
        return int(
            session.execute(text("SELECT last_value FROM ledger_transactions_id_seq")).scalar_one()
        )


@pytest.mark.parametrize("database_url", ["postgresql"], indirect=True)
def test_a_batch_holds_its_accounts_rows_while_it_waits_for_its_chains_head_on_postgresql(
    engine: Engine, session_factory: sessionmaker[Session], book: AccountBook
) -> None:
    """The balances' rows are locked before the head's, as every batch locks them, though
    one statement takes both: two batches never wait on each other in opposite orders."""
    _post(session_factory, book, hand(1, 10, 0))  # the rows read once, then remembered
    holder, pool = session_factory(), ThreadPoolExecutor(max_workers=1)
    try:
        holder.execute(text("SELECT seq FROM ledger_chain_head WHERE id = 1 FOR UPDATE"))
        waiting = pool.submit(_post, session_factory, book, hand(2, 10, 0))
        until_a_backend_waits_for_a_lock(engine, "the batch")
        with session_factory() as probe, pytest.raises(OperationalError, match="lock"):
            probe.execute(_LOCK_WALLET_AT_ONCE, {"code": WALLET.code})
    finally:
        holder.close()  # the head let go: the batch goes on, whatever was asserted
        pool.shutdown(wait=True)
    waiting.result(timeout=30)


_LOCK_WALLET_AT_ONCE = text("SELECT 1 FROM ledger_accounts WHERE code = :code FOR UPDATE NOWAIT")


def test_a_key_posted_before_is_refused_by_the_database(
    session_factory: sessionmaker[Session], book: AccountBook
) -> None:
    _post(session_factory, book, hand(1, 10, 0))
    with pytest.raises(IntegrityError):
        _post(session_factory, book, hand(1, 10, 0))


def test_an_account_nobody_opened_is_refused(
    session_factory: sessionmaker[Session], book: AccountBook
) -> None:
    stranger = chart.wallet("p2", "USD").code
    batch = [request("x", Transfer(WALLET.code, stranger, 1))]
    with session_factory.begin() as session:
        driver = Driver(session.connection())
        rows = book.find(driver, [WALLET.code, CASHIER.code])
        with pytest.raises(UnknownAccount):
            post_new(driver, batch, rows, chain=1, posted_at=datetime.now(UTC))


def test_the_book_does_not_remember_an_account_whose_opening_rolled_back(
    session_factory: sessionmaker[Session], book: AccountBook
) -> None:
    newcomer = chart.wallet("p3", "USD")
    session = session_factory()
    with session.begin():
        driver = Driver(session.connection())
        book.opening(session, driver, [newcomer])
        session.rollback()
    with session_factory.begin() as later:
        assert book.find(Driver(later.connection()), [newcomer.code]) == {}


def test_the_book_does_not_remember_rows_a_transaction_opened_earlier_itself(
    session_factory: sessionmaker[Session], book: AccountBook
) -> None:
    first, second = chart.wallet("p4", "USD"), chart.held("p4", "USD")
    session = session_factory()
    with session.begin():
        driver = Driver(session.connection())
        book.opening(session, driver, [first])
        book.opening(session, driver, [first, second])
        session.rollback()
    with session_factory.begin() as later:
        assert book.find(Driver(later.connection()), [first.code, second.code]) == {}


def test_an_open_account_unlike_its_spec_is_refused(
    session_factory: sessionmaker[Session], book: AccountBook
) -> None:
    impostor = AccountSpec(WALLET.code, "USD", Side.DEBIT)
    with session_factory.begin() as session, pytest.raises(AccountConflict):
        book.opening(session, Driver(session.connection()), [impostor])


def test_a_balance_never_opened_reads_zero(session_factory: sessionmaker[Session]) -> None:
    with session_factory() as session:
        assert read_balance(Driver(session.connection()), "wallet:nobody:USD") == 0


def test_a_chains_transaction_ids_rise_with_its_seq_under_concurrent_postings(
    session_factory: sessionmaker[Session], book: AccountBook
) -> None:
    """Two posters on one chain, some of whose postings roll back after taking the head:
    the chain's ids come in the order of its links (on PostgreSQL they are drawn with the
    head's lock held)."""

    def poster(first: int) -> None:
        for number in range(first, first + 30, 2):
            with session_factory() as session, session.begin():
                _post_in(session, book, hand(number, 1, 1))
                if number % 5 == 0:
                    session.rollback()  # refused after the head was locked

    with ThreadPoolExecutor(max_workers=2) as pool:
        for posted in [pool.submit(poster, first) for first in (1_000, 1_001)]:
            posted.result()  # a poster's failure fails the test
    with session_factory() as session:
        ids = session.scalars(
            select(LedgerTransaction.id)
            .where(LedgerTransaction.chain == 1)
            .order_by(LedgerTransaction.seq)
        ).all()
        assert len(ids) > 2 and ids == sorted(ids)
        assert verify_ledger(session).ok


@settings(
    max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(hands=st.lists(st.tuples(st.integers(1, 30), st.integers(0, 90)), min_size=1, max_size=6))
def test_money_is_conserved_and_every_fresh_transaction_balances(
    session_factory: sessionmaker[Session], book: AccountBook, hands: list[tuple[int, int]]
) -> None:
    for stake, returned in hands:
        number = next(_numbers)
        with contextlib.suppress(LimitExceeded):  # a stake beyond the wallet moves nothing
            _post(session_factory, book, hand(number, stake, returned))
    with session_factory() as session:
        found = balances(session, [spec.code for spec in SPECS])
        assert found[CASHIER.code] == found[WALLET.code] + found[HELD.code] + found[HOUSE.code]
        assert verify_ledger(session).ok


_numbers = iter(range(10, 10**9))
