"""Posting a fresh batch whose locks the caller took ahead of it (`ledger.fresh.LockedChain`,
PostgreSQL): its limits decided from the balances read under them, its writes sent with
the next statement, and the database's own limits still guarding the balances."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

import pytest
from sqlalchemy import Engine, text
from sqlalchemy.exc import DBAPIError
from sqlalchemy.orm import Session, sessionmaker

from ledger.batch import INT64_MAX
from ledger.driver import Driver, watch_exchanges
from ledger.errors import AmountTooLarge, InvalidTransaction, LimitExceeded
from ledger.fresh import AccountBook, LockedChain, lock_ahead, post_new
from ledger.model import TransactionRequest
from ledger.posting import balances
from ledger.verify import verify_ledger
from tests.ledger.fresh_batches import CASHIER, HELD, HOUSE, SPECS, WALLET, hand

pytestmark = pytest.mark.parametrize("database_url", ["postgresql"], indirect=True)

_CODES = [spec.code for spec in SPECS]


def _locks(session: Session, codes: Sequence[str] = _CODES, ids: int = 2) -> LockedChain | None:
    """The locks a posting on chain 1 takes ahead of it (`lock_ahead`: the schema's
    `ledger_posting_locks`, which a hand's and a cash movement's lock statements call)."""
    return lock_ahead(Driver(session.connection()), 1, codes, ids=ids)


def _held(session: Session) -> LockedChain:
    locked = _locks(session)
    assert locked is not None
    return locked


def _post_locked(
    session: Session, book: AccountBook, batch: Sequence[TransactionRequest], locked: LockedChain
) -> Driver:
    driver = Driver(session.connection())
    rows = book.find(driver, _CODES)
    post_new(driver, batch, rows, chain=1, posted_at=datetime.now(UTC), locked=locked)
    return driver


def test_a_batch_posted_under_its_locks_moves_every_balance_and_keeps_the_chain_whole(
    session_factory: sessionmaker[Session], book: AccountBook
) -> None:
    with session_factory.begin() as session:
        _post_locked(session, book, hand(1, 40, 80), _held(session))
    with session_factory() as session:
        found = balances(session, _CODES)
        assert found == {WALLET.code: 140, HELD.code: 0, HOUSE.code: -40, CASHIER.code: 100}
        assert verify_ledger(session).ok


def test_a_batch_posted_under_its_locks_waits_for_no_answer(
    engine: Engine, session_factory: sessionmaker[Session], book: AccountBook
) -> None:
    """Its writes, and the head's move, go with the COMMIT: nothing is sent while it posts."""
    sent: list[list[str]] = []
    watch_exchanges(engine, sent.append)
    engine.dispose()  # the connections opened from now on are watched
    with session_factory() as session:
        locked = _held(session)
        driver = Driver(session.connection())
        rows = book.find(driver, _CODES)  # read, as a process reads them once
        sent.clear()
        post_new(driver, hand(1, 40, 80), rows, chain=1, posted_at=datetime.now(UTC), locked=locked)
        assert sent == []
        driver.commit()
        session.commit()
    assert len(sent) == 1 and sent[0][-1] == "COMMIT"


def test_a_batch_under_its_locks_that_would_overdraw_is_refused_before_any_write(
    session_factory: sessionmaker[Session], book: AccountBook
) -> None:
    with session_factory.begin() as session:  # committed whatever the refusal left
        locked = _held(session)
        with pytest.raises(LimitExceeded, match=WALLET.code):
            _post_locked(session, book, hand(1, 101, 300), locked)
    with session_factory() as session:
        assert balances(session, _CODES)[WALLET.code] == 100
        assert verify_ledger(session).ok


def test_a_balance_that_would_leave_the_64_bit_range_is_refused_as_too_large(
    session_factory: sessionmaker[Session], book: AccountBook
) -> None:
    with session_factory.begin() as session:
        locked = _held(session)
        near_the_top = LockedChain(
            {**locked.balances, WALLET.code: INT64_MAX - 10}, locked.head, locked.ids
        )
        with pytest.raises(AmountTooLarge, match=WALLET.code):
            _post_locked(session, book, hand(1, 40, 80), near_the_top)


def test_a_limit_the_caller_misread_fails_the_transaction_instead_of_posting_past_it(
    session_factory: sessionmaker[Session], book: AccountBook
) -> None:
    """Balances that lie (the wallet claimed at 1,000, where it holds 100): the UPDATE's own
    limit refuses the move, and the statement fails the COMMIT's exchange."""
    with session_factory() as session:
        locked = _held(session)
        lying = LockedChain({**locked.balances, WALLET.code: 1_000}, locked.head, locked.ids)
        driver = _post_locked(session, book, hand(1, 500, 0), lying)
        with pytest.raises(DBAPIError, match="division by zero"):
            driver.commit()
        session.rollback()
    with session_factory() as session:
        assert balances(session, _CODES)[WALLET.code] == 100
        assert verify_ledger(session).ok


@pytest.mark.usefixtures("book")
def test_the_locks_read_balances_the_head_and_rising_ids_of_the_chain(
    session_factory: sessionmaker[Session],
) -> None:
    with session_factory() as session:
        locked = _held(session)
        head = session.execute(text("SELECT seq, hash FROM ledger_chain_head WHERE id = 1")).one()
    assert locked.balances == {WALLET.code: 100, HELD.code: 0, HOUSE.code: 0, CASHIER.code: 100}
    assert (locked.head.chain, locked.head.seq, locked.head.hash) == (1, *head)
    assert len(locked.ids) == 2 and locked.ids[0] < locked.ids[1]


@pytest.mark.usefixtures("book")
def test_an_account_not_open_locks_no_head_and_draws_no_id(
    engine: Engine, session_factory: sessionmaker[Session]
) -> None:
    drawn_before = _last_id_drawn(session_factory)
    with session_factory() as session:
        assert _locks(session, [WALLET.code, "wallet:nobody:USD"]) is None
        with engine.connect() as other:  # the head is free: another posting takes it at once
            other.execute(text("SELECT 1 FROM ledger_chain_head WHERE id = 1 FOR UPDATE NOWAIT"))
    assert _last_id_drawn(session_factory) == drawn_before


def _last_id_drawn(session_factory: sessionmaker[Session]) -> int:
    with session_factory() as session:
        last = session.execute(text("SELECT last_value FROM ledger_transactions_id_seq"))
        return int(last.scalar_one())


def test_a_batch_with_more_transactions_than_ids_drawn_is_refused(
    session_factory: sessionmaker[Session], book: AccountBook
) -> None:
    with session_factory() as session:
        one_id = _locks(session, ids=1)
        assert one_id is not None
        with pytest.raises(InvalidTransaction, match="ids"):
            _post_locked(session, book, hand(1, 40, 80), one_id)


def test_a_batch_moving_an_account_not_locked_is_refused(
    session_factory: sessionmaker[Session], book: AccountBook
) -> None:
    with session_factory() as session:
        without_the_house = _locks(session, [WALLET.code, HELD.code])
        assert without_the_house is not None
        with pytest.raises(InvalidTransaction, match=HOUSE.code):
            _post_locked(session, book, hand(1, 40, 80), without_the_house)
