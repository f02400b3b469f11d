"""Batches (`post_all`): several transactions posted as one unit, all of them or none."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import text
from sqlalchemy.exc import DatabaseError
from sqlalchemy.orm import Session, sessionmaker

from ledger import chart
from ledger.errors import IdempotencyConflict, InvalidTransaction, LimitExceeded
from ledger.model import Side, TransactionRequest, Transfer
from ledger.posting import balances, open_account, post, post_all
from ledger.report import ChainHead
from ledger.verify import verify_ledger

WALLET = chart.wallet("p1", "USD").code
HELD = chart.held("p1", "USD").code
HOUSE = chart.house("USD").code
CASHIER = chart.cashier("USD").code
SPECS = [
    chart.wallet("p1", "USD"),
    chart.held("p1", "USD"),
    chart.house("USD"),
    chart.cashier("USD"),
]
BY_CODE = {spec.code: spec for spec in SPECS}


@pytest.fixture
def funded(session_factory: sessionmaker[Session]) -> None:
    """A wallet holding 100."""
    with session_factory.begin() as session:
        for spec in SPECS:
            open_account(session, spec)
        post(session, _request("fund", Transfer(CASHIER, WALLET, 100)))


def _request(key: str, *transfers: Transfer) -> TransactionRequest:
    return TransactionRequest(kind="test", idempotency_key=key, transfers=transfers)


def _hand(number: int, stake: int, returned: int) -> list[TransactionRequest]:
    """A hand's stake and settlement, as the service posts them (nothing returned on a loss)."""
    paid = (Transfer(HOUSE, WALLET, returned),) if returned else ()
    return [
        _request(f"h{number}:stake", Transfer(WALLET, HELD, stake)),
        _request(f"h{number}:settlement", Transfer(HELD, HOUSE, stake), *paid),
    ]


def _balances(session_factory: sessionmaker[Session]) -> dict[str, int]:
    with session_factory() as session:
        return balances(session, BY_CODE)


@pytest.mark.usefixtures("funded")
def test_a_batch_posts_each_transaction_in_order_on_the_hash_chain(
    session_factory: sessionmaker[Session],
) -> None:
    with session_factory.begin() as session:
        stake, settlement = post_all(session, _hand(1, 40, 80))
    assert (stake.seq, settlement.seq) == (17, 33)  # chain 1's links after the deposit's 1
    assert (stake.kind, settlement.kind) == ("test", "test")
    assert settlement.id > stake.id
    assert _balances(session_factory) == {WALLET: 140, HELD: 0, HOUSE: -40, CASHIER: 100}
    with session_factory() as session:
        report = verify_ledger(session)
    assert report.ok, report.problems
    assert report.heads[0] == ChainHead(1, 33, settlement.hash)


@pytest.mark.usefixtures("funded")
def test_a_limit_is_checked_at_every_step_not_only_at_the_end_of_the_batch(
    session_factory: sessionmaker[Session],
) -> None:
    # Staking 150 overdraws the wallet even though the settlement would bring it to 250.
    with session_factory.begin() as session, pytest.raises(LimitExceeded) as refused:
        post_all(session, _hand(1, 150, 300))
    assert refused.value.account == WALLET
    assert _balances(session_factory) == {WALLET: 100, HELD: 0, HOUSE: 0, CASHIER: 100}


@pytest.mark.usefixtures("funded")
def test_a_retried_batch_replays_every_transaction_and_moves_nothing(
    session_factory: sessionmaker[Session],
) -> None:
    with session_factory.begin() as session:
        first = post_all(session, _hand(1, 100, 0))  # empties the wallet
    with session_factory.begin() as session:
        again = post_all(session, _hand(1, 100, 0))
    assert [posted.replayed for posted in again] == [True, True]
    assert [posted.id for posted in again] == [posted.id for posted in first]
    assert _balances(session_factory)[WALLET] == 0


@pytest.mark.usefixtures("funded")
def test_a_batch_posted_only_in_part_before_is_refused_and_moves_nothing(
    session_factory: sessionmaker[Session],
) -> None:
    stake, settlement = _hand(1, 40, 80)
    with session_factory.begin() as session:
        post(session, stake)
    with session_factory.begin() as session, pytest.raises(InvalidTransaction):
        post_all(session, [stake, settlement])
    assert _balances(session_factory)[WALLET] == 60


@pytest.mark.usefixtures("funded")
def test_a_batch_reusing_a_key_for_other_content_is_an_idempotency_conflict(
    session_factory: sessionmaker[Session],
) -> None:
    with session_factory.begin() as session:
        post_all(session, _hand(1, 40, 80))
    with session_factory.begin() as session, pytest.raises(IdempotencyConflict):
        post_all(session, _hand(1, 40, 0))
    assert _balances(session_factory)[WALLET] == 140


@pytest.mark.usefixtures("funded")
def test_the_chain_head_can_only_name_the_newest_transaction(
    session_factory: sessionmaker[Session],
) -> None:
    with session_factory.begin() as session:
        post_all(session, _hand(1, 40, 80))
    for statement in (
        "UPDATE ledger_chain_head SET seq = seq + 1",  # past the newest
        "UPDATE ledger_chain_head SET seq = seq - 1",  # backwards
        f"UPDATE ledger_chain_head SET hash = '{'0' * 64}'",  # not the newest's hash
    ):
        with session_factory.begin() as session, pytest.raises(DatabaseError):
            session.execute(text(statement))


_keys = itertools.count()
transfer = st.tuples(
    st.sampled_from(list(BY_CODE)), st.sampled_from(list(BY_CODE)), st.integers(1, 200)
).filter(lambda t: t[0] != t[1])
batch = st.lists(st.lists(transfer, min_size=1, max_size=2), min_size=1, max_size=3)


def _within_limits(balances_by_code: dict[str, int]) -> bool:
    return all(
        (limit := BY_CODE[code].min_balance) is None or value >= limit
        for code, value in balances_by_code.items()
    )


def _after(
    model: dict[str, int], requests: list[list[tuple[str, str, int]]]
) -> dict[str, int] | None:
    """The model after posting the requests one by one; None if any step breaks a limit."""
    after = dict(model)
    for transfers in requests:
        for debit, credit, amount in transfers:
            for code, signed in ((debit, amount), (credit, -amount)):
                after[code] += signed if BY_CODE[code].side == Side.DEBIT else -signed
        if not _within_limits(after):
            return None
    return after


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(batches=st.lists(batch, min_size=1, max_size=6))
def test_a_batch_is_all_or_nothing_and_the_ledger_stays_balanced(
    session_factory: sessionmaker[Session], batches: list[list[list[tuple[str, str, int]]]]
) -> None:
    with session_factory.begin() as session:
        for spec in SPECS:
            open_account(session, spec)
        model = balances(session, BY_CODE)  # examples share the database: start from it
    for requests in batches:
        expected = _after(model, requests)
        posting = [
            _request(f"b{next(_keys)}", *(Transfer(d, c, a) for d, c, a in transfers))
            for transfers in requests
        ]
        with session_factory() as session:
            try:
                post_all(session, posting)
                session.commit()
                assert expected is not None, "a batch breaking a limit midway was accepted"
                model = expected
            except LimitExceeded:
                session.rollback()
                assert expected is None, "a batch within limits at every step was refused"
    with session_factory() as session:
        assert balances(session, BY_CODE) == model
        report = verify_ledger(session)
    assert report.ok, report.problems
    assert report.trial_balance.get("USD", 0) == 0
