"""The database refuses edits of ledger rows; edits made behind its back are detected."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from sqlalchemy import Engine, text
from sqlalchemy.exc import DatabaseError
from sqlalchemy.orm import Session, sessionmaker

from ledger import chart
from ledger.model import PostedTransaction, TransactionRequest, Transfer
from ledger.posting import open_account, post
from ledger.verify import verify_ledger
from tests.ledger.tampering import drop_ledger_triggers

Deposit = Callable[[str, int], PostedTransaction]
WALLET = chart.wallet("p1", "USD").code


@pytest.fixture
def three(session_factory: sessionmaker[Session], deposit: Deposit) -> list[PostedTransaction]:
    """Three posted transactions: two deposits and a stake lost to the house."""
    first = deposit("p1", 500)
    second = deposit("p1", 300)
    with session_factory.begin() as session:
        open_account(session, chart.house("USD"))
        third = post(
            session,
            TransactionRequest(
                "stake", "lose-1", (Transfer(WALLET, chart.house("USD").code, 200),)
            ),
        )
    return [first, second, third]


def _account_id(engine: Engine, code: str) -> int:
    with engine.connect() as connection:
        return int(
            connection.execute(
                text("SELECT id FROM ledger_accounts WHERE code = :code"), {"code": code}
            ).scalar_one()
        )


@pytest.mark.parametrize(
    "statement",
    [
        "UPDATE ledger_entries SET amount = amount + 1",
        "DELETE FROM ledger_entries",
        "UPDATE ledger_transactions SET kind = 'edited'",
        "DELETE FROM ledger_transactions",
        "UPDATE ledger_accounts SET code = 'wallet:someone-else:USD'",
        "UPDATE ledger_accounts SET min_balance = NULL",
        "DELETE FROM ledger_accounts",
        "UPDATE ledger_chain_head SET seq = 0",
        "DELETE FROM ledger_chain_head",
    ],
    ids=lambda s: s.split(" SET")[0].replace(" ", "-").lower(),
)
@pytest.mark.usefixtures("three")
def test_raw_sql_update_or_delete_of_ledger_rows_is_refused(engine: Engine, statement: str) -> None:
    with pytest.raises(DatabaseError), engine.begin() as connection:
        connection.execute(text(statement))
    with Session(engine) as session:
        assert verify_ledger(session).ok


@pytest.mark.usefixtures("three")
def test_truncate_is_refused_on_postgresql(engine: Engine) -> None:
    if engine.dialect.name != "postgresql":
        pytest.skip("SQLite has no TRUNCATE")
    for table in ("ledger_entries", "ledger_transactions", "ledger_chain_head"):
        with pytest.raises(DatabaseError), engine.begin() as connection:
            connection.execute(text(f"TRUNCATE {table} CASCADE"))


def _tamper(engine: Engine, statement: str, **params: object) -> set[tuple[str, str, int | None]]:
    """Run `statement` with the triggers gone; what the verifier reports, as triples."""
    drop_ledger_triggers(engine)
    with engine.begin() as connection:
        connection.execute(text(statement), params)
    with Session(engine) as session:
        report = verify_ledger(session)
    assert not report.ok
    return {(p.table, p.code, p.row_id) for p in report.problems}


def test_verifier_catches_an_edited_entry_amount(
    engine: Engine, three: list[PostedTransaction]
) -> None:
    target = three[1]
    problems = _tamper(
        engine,
        "UPDATE ledger_entries SET amount = amount + 1 "
        "WHERE transaction_id = :tid AND account_id = :aid",
        tid=target.id,
        aid=_account_id(engine, WALLET),
    )
    assert ("ledger_transactions", "hash_mismatch", target.id) in problems
    assert ("ledger_transactions", "unbalanced", target.id) in problems
    assert ("ledger_accounts", "balance_mismatch", _account_id(engine, WALLET)) in problems


def test_verifier_catches_an_edited_transaction(
    engine: Engine, three: list[PostedTransaction]
) -> None:
    target = three[0]
    problems = _tamper(
        engine, "UPDATE ledger_transactions SET kind = 'bonus' WHERE id = :id", id=target.id
    )
    assert problems == {("ledger_transactions", "hash_mismatch", target.id)}


def test_verifier_catches_a_deleted_transaction(
    engine: Engine, three: list[PostedTransaction]
) -> None:
    target, following = three[1], three[2]
    drop_ledger_triggers(engine)
    with engine.begin() as connection:
        connection.execute(
            text("DELETE FROM ledger_entries WHERE transaction_id = :id"), {"id": target.id}
        )
    problems = _tamper(engine, "DELETE FROM ledger_transactions WHERE id = :id", id=target.id)
    assert ("ledger_transactions", "seq_gap", following.id) in problems
    assert ("ledger_transactions", "prev_hash_mismatch", following.id) in problems
    assert ("ledger_accounts", "balance_mismatch", _account_id(engine, WALLET)) in problems


def test_verifier_catches_a_deleted_last_transaction_by_the_chain_head(
    engine: Engine, three: list[PostedTransaction]
) -> None:
    target = three[2]
    drop_ledger_triggers(engine)
    with engine.begin() as connection:
        connection.execute(
            text("DELETE FROM ledger_entries WHERE transaction_id = :id"), {"id": target.id}
        )
    problems = _tamper(engine, "DELETE FROM ledger_transactions WHERE id = :id", id=target.id)
    assert ("ledger_chain_head", "head_mismatch", 1) in problems


@pytest.mark.usefixtures("three")
def test_verifier_catches_an_edited_stored_balance(engine: Engine) -> None:
    wallet_id = _account_id(engine, WALLET)
    problems = _tamper(
        engine, "UPDATE ledger_accounts SET balance = balance + 1000 WHERE id = :id", id=wallet_id
    )
    assert problems == {("ledger_accounts", "balance_mismatch", wallet_id)}


@pytest.mark.usefixtures("three")
def test_verifier_report_serialises_to_json(engine: Engine) -> None:
    import json

    with Session(engine) as session:
        progress: list[int] = []
        report = verify_ledger(session, on_progress=progress.append)
    document = json.loads(json.dumps(report.as_dict()))
    assert document["ok"] is True
    assert document["transactions_checked"] == 3
    assert document["trial_balance"] == {"USD": 0}
    assert progress[-1] == 3
