"""Concurrent writers queue and never overdraw: no lost updates, no "database is locked"."""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

from sqlalchemy import Engine, func, select
from sqlalchemy.orm import Session, sessionmaker

from ledger import chart
from ledger.errors import LimitExceeded
from ledger.model import PostedTransaction, TransactionRequest, Transfer
from ledger.posting import balance, open_account, post
from ledger.schema import accounts
from ledger.verify import verify_ledger

Deposit = Callable[[str, int], PostedTransaction]
THREADS = 50


def _run_concurrently(action: Callable[[int], str]) -> Counter[str]:
    """Run `action(i)` for i < THREADS, all released at once; tally what they return."""
    barrier = threading.Barrier(THREADS)

    def run(i: int) -> str:
        barrier.wait(timeout=30)
        return action(i)

    with ThreadPoolExecutor(max_workers=THREADS) as pool:
        return Counter(pool.map(run, range(THREADS)))


def test_fifty_concurrent_debits_against_funds_for_ten_succeed_exactly_ten_times(
    engine: Engine, session_factory: sessionmaker[Session], deposit: Deposit
) -> None:
    deposit("p1", 10 * 100)
    wallet, cashier = chart.wallet("p1", "USD").code, chart.cashier("USD").code

    def withdraw(i: int) -> str:
        with session_factory() as session:
            try:
                post(
                    session,
                    TransactionRequest("withdrawal", f"w-{i}", (Transfer(wallet, cashier, 100),)),
                )
                session.commit()
            except LimitExceeded:
                session.rollback()
                return "refused"
        return "posted"

    outcomes = _run_concurrently(withdraw)

    assert outcomes == Counter({"posted": 10, "refused": 40})
    with session_factory() as session:
        assert balance(session, wallet) == 0
        assert balance(session, cashier) == 0
        assert verify_ledger(session).ok
    assert engine.dialect.name in {"sqlite", "postgresql"}


def test_concurrent_retries_with_one_idempotency_key_post_once(
    session_factory: sessionmaker[Session], deposit: Deposit
) -> None:
    deposit("p1", 1000)
    wallet, house = chart.wallet("p1", "USD").code, chart.house("USD").code
    with session_factory.begin() as session:
        open_account(session, chart.house("USD"))
    request = TransactionRequest("stake", "same-key", (Transfer(wallet, house, 100),))

    def attempt(_: int) -> str:
        with session_factory.begin() as session:
            return "replayed" if post(session, request).replayed else "posted"

    outcomes = _run_concurrently(attempt)

    assert outcomes == Counter({"posted": 1, "replayed": THREADS - 1})
    with session_factory() as session:
        assert balance(session, wallet) == 900
        assert verify_ledger(session).ok


def test_concurrent_opening_of_one_account_creates_it_once(
    session_factory: sessionmaker[Session],
) -> None:
    spec = chart.wallet("new-player", "USD")

    def open_it(_: int) -> str:
        with session_factory.begin() as session:
            open_account(session, spec)
        return "ok"

    assert _run_concurrently(open_it) == Counter({"ok": THREADS})
    with session_factory() as session:
        count = session.execute(
            select(func.count()).select_from(accounts).where(accounts.c.code == spec.code)
        ).scalar_one()
    assert count == 1
