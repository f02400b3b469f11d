"""Invariants under any sequence of postings, some refused for limits."""

from __future__ import annotations

import itertools

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import func, select
from sqlalchemy.orm import Session, sessionmaker

from ledger import chart
from ledger.errors import LimitExceeded
from ledger.model import AccountSpec, Side, TransactionRequest, Transfer
from ledger.posting import balances, open_account, post
from ledger.schema import entries
from ledger.verify import verify_ledger

SPECS: list[AccountSpec] = [
    chart.cashier("USD"),
    chart.house("USD"),
    *(chart.wallet(p, "USD") for p in ("a", "b")),
    *(chart.held(p, "USD") for p in ("a", "b")),
]
CODES = [spec.code for spec in SPECS]
BY_CODE = {spec.code: spec for spec in SPECS}
_keys = itertools.count()

transfer = st.tuples(
    st.sampled_from(CODES), st.sampled_from(CODES), st.integers(min_value=1, max_value=500)
).filter(lambda t: t[0] != t[1])
request = st.lists(transfer, min_size=1, max_size=3)


def _expected_after(
    model: dict[str, int], transfers: list[tuple[str, str, int]]
) -> dict[str, int] | None:
    """The model's balances after the request, or None if a limit refuses it."""
    after = dict(model)
    for debit, credit, amount in transfers:
        for code, signed in ((debit, amount), (credit, -amount)):
            after[code] += signed if BY_CODE[code].side == Side.DEBIT else -signed
    for code, value in after.items():
        limit = BY_CODE[code].min_balance
        if limit is not None and value < limit:
            return None
    return after


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(requests=st.lists(request, min_size=1, max_size=12))
def test_any_sequence_of_postings_keeps_the_ledger_balanced_and_within_limits(
    session_factory: sessionmaker[Session], requests: list[list[tuple[str, str, int]]]
) -> None:
    with session_factory.begin() as session:
        for spec in SPECS:
            open_account(session, spec)
        model = balances(session, CODES)  # examples share the database: start from it

    for transfers in requests:
        expected = _expected_after(model, transfers)
        with session_factory() as session:
            try:
                post(
                    session,
                    TransactionRequest(
                        kind="test",
                        idempotency_key=f"prop-{next(_keys)}",
                        transfers=tuple(Transfer(d, c, a) for d, c, a in transfers),
                    ),
                )
                session.commit()
                assert expected is not None, "a posting beyond a limit was accepted"
                model = expected
            except LimitExceeded:
                session.rollback()
                assert expected is None, "a posting within limits was refused"

    with session_factory() as session:
        stored = balances(session, CODES)
        assert stored == model
        for code, value in stored.items():
            limit = BY_CODE[code].min_balance
            assert limit is None or value >= limit
        unbalanced = session.execute(
            select(entries.c.transaction_id)
            .group_by(entries.c.transaction_id, entries.c.currency)
            .having(func.sum(entries.c.amount) != 0)
        ).all()
        assert unbalanced == []
        report = verify_ledger(session)
        assert report.ok, report.problems
        assert report.trial_balance.get("USD", 0) == 0
