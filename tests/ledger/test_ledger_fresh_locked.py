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

from ledger.batch import INT64_MAX, Link
from ledger.driver import Driver, watch_exchanges
from ledger.errors import AmountTooLarge, LimitExceeded
from ledger.fresh import AccountBook, LockedChain, post_new
from ledger.model import TransactionRequest
from ledger.posting import balances
from ledger.verify import verify_ledger
from tests.ledger.test_ledger_fresh import CASHIER, HELD, HOUSE, SPECS, WALLET, _hand, book

pytestmark = pytest.mark.parametrize("database_url", ["postgresql"], indirect=True)

__all__ = ["book"]  # the fixture, shared with the unlocked batches' tests

_CODES = [spec.code for spec in SPECS]
_LOCK_ACCOUNTS = text(
    "SELECT code, balance FROM ledger_accounts WHERE code = ANY(:codes) ORDER BY id FOR UPDATE"
)
_LOCK_HEAD = text("SELECT seq, hash FROM ledger_chain_head WHERE id = 1 FOR UPDATE")
_DRAW_IDS = text("SELECT nextval('ledger_transactions_id_seq') FROM generate_series(1, 2)")


def _locks(session: Session) -> LockedChain:
    """The locks `hand_opening_locking_chain` takes for a hand, taken here: the accounts in
    id order, then chain 1's head, then two ids."""
    found = {
        code: int(balance) for code, balance in session.execute(_LOCK_ACCOUNTS, {"codes": _CODES})
    }
    seq, head_hash = session.execute(_LOCK_HEAD).one()
    ids = [int(drawn) for (drawn,) in session.execute(_DRAW_IDS)]
    return LockedChain(found, Link(1, int(seq), head_hash), ids)


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
        _post_locked(session, book, _hand(1, 40, 80), _locks(session))
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
        locked = _locks(session)
        driver = Driver(session.connection())
        rows = book.find(driver, _CODES)  # read, as a process reads them once
        sent.clear()
        post_new(
            driver, _hand(1, 40, 80), rows, chain=1, posted_at=datetime.now(UTC), locked=locked
        )
        assert sent == []
        driver.commit()
        session.commit()
    assert len(sent) == 1 and sent[0][-1] == "COMMIT"


def test_a_batch_under_its_locks_that_would_overdraw_is_refused_before_any_write(
    session_factory: sessionmaker[Session], book: AccountBook
) -> None:
    with session_factory.begin() as session:  # committed whatever the refusal left
        locked = _locks(session)
        with pytest.raises(LimitExceeded, match=WALLET.code):
            _post_locked(session, book, _hand(1, 101, 300), locked)
    with session_factory() as session:
        assert balances(session, _CODES)[WALLET.code] == 100
        assert verify_ledger(session).ok


def test_a_balance_that_would_leave_the_64_bit_range_is_refused_as_too_large(
    session_factory: sessionmaker[Session], book: AccountBook
) -> None:
    with session_factory.begin() as session:
        locked = _locks(session)
        near_the_top = LockedChain(
            {**locked.balances, WALLET.code: INT64_MAX - 10}, locked.head, locked.ids
        )
        with pytest.raises(AmountTooLarge, match=WALLET.code):
            _post_locked(session, book, _hand(1, 40, 80), near_the_top)


def test_a_limit_the_caller_misread_fails_the_transaction_instead_of_posting_past_it(
    session_factory: sessionmaker[Session], book: AccountBook
) -> None:
    """Balances that lie (the wallet claimed at 1,000, where it holds 100): the UPDATE's own
    limit refuses the move, and the statement fails the COMMIT's exchange."""
    with session_factory() as session:
        locked = _locks(session)
        lying = LockedChain({**locked.balances, WALLET.code: 1_000}, locked.head, locked.ids)
        driver = _post_locked(session, book, _hand(1, 500, 0), lying)
        with pytest.raises(DBAPIError, match="division by zero"):
            driver.commit()
        session.rollback()
    with session_factory() as session:
        assert balances(session, _CODES)[WALLET.code] == 100
        assert verify_ledger(session).ok
