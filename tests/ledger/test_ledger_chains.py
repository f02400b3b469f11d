"""Several hash chains: postings on different chains share no row, and the verifier still
catches every deletion, insertion and edit, chain by chain."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest
from hypothesis import given
from hypothesis import strategies as st
from sqlalchemy import Engine, text
from sqlalchemy.exc import DatabaseError
from sqlalchemy.orm import Session, sessionmaker

from ledger import chart
from ledger.chains import CHAINS, chain_for, follows, next_seq
from ledger.errors import InvalidTransaction
from ledger.model import PostedTransaction, TransactionRequest, Transfer
from ledger.posting import balances, open_account, post, reverse
from ledger.report import ChainHead
from ledger.schema import GENESIS_HASH
from ledger.verify import verify_ledger
from tests.ledger.tampering import drop_ledger_triggers

CASHIER = chart.cashier("USD")
PLAYERS = [f"p{n}" for n in range(8)]


@pytest.fixture
def opened(session_factory: sessionmaker[Session]) -> None:
    with session_factory.begin() as session:
        for spec in [CASHIER, *(chart.wallet(player, "USD") for player in PLAYERS)]:
            open_account(session, spec)


def _deposit_request(key: str, player: str = "p0") -> TransactionRequest:
    return TransactionRequest(
        kind="deposit",
        idempotency_key=key,
        transfers=(Transfer(CASHIER.code, chart.wallet(player, "USD").code, 10),),
    )


def _deposit(
    session_factory: sessionmaker[Session], key: str, chain: int, player: str = "p0"
) -> PostedTransaction:
    with session_factory.begin() as session:
        return post(session, _deposit_request(key, player), chain=chain)


def _problems(session_factory: sessionmaker[Session]) -> set[tuple[str, str, int | None]]:
    with session_factory() as session:
        report = verify_ledger(session)
    return {(p.table, p.code, p.row_id) for p in report.problems}


@given(st.text(max_size=40))
def test_a_partition_key_always_maps_to_the_same_chain(key: str) -> None:
    assert chain_for(key) == chain_for(key)
    assert 1 <= chain_for(key) <= CHAINS


def test_sequential_player_ids_spread_over_every_chain() -> None:
    counts = [0] * CHAINS
    for player_id in range(1, 1601):
        counts[chain_for(str(player_id)) - 1] += 1
    assert min(counts) >= 60  # 100 each on average


@given(st.integers(1, CHAINS), st.integers(1, CHAINS), st.integers(0, 10**6))
def test_two_chains_never_number_a_transaction_alike(a: int, b: int, start: int) -> None:
    numbers_a = {next_seq(a, start)}
    numbers_b = {next_seq(b, start)}
    for _ in range(20):
        numbers_a.add(next_seq(a, max(numbers_a)))
        numbers_b.add(next_seq(b, max(numbers_b)))
    assert (numbers_a & numbers_b == set()) == (a != b)
    assert all(follows(a, n, next_seq(a, n)) for n in numbers_a)


@pytest.mark.usefixtures("opened")
def test_each_chain_links_its_own_transactions_from_the_genesis_hash(
    session_factory: sessionmaker[Session],
) -> None:
    first_on_2 = _deposit(session_factory, "a", chain=2)
    first_on_5 = _deposit(session_factory, "b", chain=5)
    second_on_2 = _deposit(session_factory, "c", chain=2)
    assert (first_on_2.seq, first_on_5.seq, second_on_2.seq) == (2, 5, 18)
    assert (first_on_2.chain, first_on_5.chain, second_on_2.chain) == (2, 5, 2)
    with session_factory() as session:
        report = verify_ledger(session)
    assert report.ok, report.problems
    heads = {head.chain: head for head in report.heads}
    assert heads[2] == ChainHead(2, 18, second_on_2.hash)
    assert heads[5] == ChainHead(5, 5, first_on_5.hash)
    assert heads[1] == ChainHead(1, 0, GENESIS_HASH)
    assert len(heads) == CHAINS


@pytest.mark.parametrize("chain", [0, CHAINS + 1, True])
@pytest.mark.usefixtures("opened")
def test_a_posting_on_a_chain_that_does_not_exist_is_refused_and_moves_nothing(
    session_factory: sessionmaker[Session], chain: int
) -> None:
    with pytest.raises(InvalidTransaction, match="no chain"):
        _deposit(session_factory, "x", chain=chain)
    with session_factory() as session:
        assert balances(session, [CASHIER.code]) == {CASHIER.code: 0}


@pytest.mark.usefixtures("opened")
def test_a_reversal_is_posted_on_the_chain_of_the_transaction_it_corrects(
    session_factory: sessionmaker[Session],
) -> None:
    original = _deposit(session_factory, "a", chain=7)
    with session_factory.begin() as session:
        reversal = reverse(session, original.id, "undo-a")
    assert reversal.chain == 7
    assert reversal.seq == next_seq(7, original.seq)
    assert _problems(session_factory) == set()


@pytest.mark.usefixtures("opened")
def test_a_transaction_moved_to_another_chain_breaks_both_chains(
    engine: Engine, session_factory: sessionmaker[Session]
) -> None:
    _deposit(session_factory, "a", chain=3)
    moved = _deposit(session_factory, "b", chain=3)
    _deposit(session_factory, "c", chain=4)
    drop_ledger_triggers(engine)
    with engine.begin() as connection:
        connection.execute(
            text("UPDATE ledger_transactions SET chain = 4 WHERE id = :id"), {"id": moved.id}
        )
    problems = _problems(session_factory)
    assert ("ledger_transactions", "prev_hash_mismatch", moved.id) in problems
    assert ("ledger_chain_head", "head_mismatch", 3) in problems
    assert ("ledger_chain_head", "head_mismatch", 4) in problems


@pytest.mark.usefixtures("opened")
def test_the_only_transaction_of_a_chain_deleted_leaves_its_head_naming_nothing(
    engine: Engine, session_factory: sessionmaker[Session]
) -> None:
    _deposit(session_factory, "a", chain=2)
    lone = _deposit(session_factory, "b", chain=9)
    drop_ledger_triggers(engine)
    with engine.begin() as connection:
        for table, column in (("ledger_entries", "transaction_id"), ("ledger_transactions", "id")):
            connection.execute(text(f"DELETE FROM {table} WHERE {column} = :id"), {"id": lone.id})
    assert ("ledger_chain_head", "head_mismatch", 9) in _problems(session_factory)


@pytest.mark.usefixtures("opened")
def test_a_chain_head_cannot_be_moved_to_another_chains_transaction(
    engine: Engine, session_factory: sessionmaker[Session]
) -> None:
    other = _deposit(session_factory, "a", chain=6)
    with pytest.raises(DatabaseError), engine.begin() as connection:
        connection.execute(
            text("UPDATE ledger_chain_head SET seq = :seq, hash = :hash WHERE id = 2"),
            {"seq": other.seq, "hash": other.hash},
        )


@pytest.mark.usefixtures("opened")
def test_concurrent_postings_on_every_chain_leave_every_chain_whole(
    session_factory: sessionmaker[Session],
) -> None:
    barrier = threading.Barrier(len(PLAYERS))

    def play(player: str) -> None:
        barrier.wait(timeout=30)
        for n in range(6):
            _deposit(session_factory, f"{player}-{n}", chain=chain_for(player), player=player)

    with ThreadPoolExecutor(max_workers=len(PLAYERS)) as pool:
        list(pool.map(play, PLAYERS))
    with session_factory() as session:
        report = verify_ledger(session)
    assert report.ok, report.problems
    assert report.transactions_checked == 6 * len(PLAYERS)


@pytest.fixture
def chain_1_head_locked(engine: Engine) -> Iterator[None]:
    """Another writer in the middle of a posting on chain 1: its head row locked."""
    if engine.dialect.name == "sqlite":
        pytest.skip("SQLite has one writer at a time: there are no row locks to avoid")
    with engine.connect() as connection:
        connection.execute(text("SELECT seq FROM ledger_chain_head WHERE id = 1 FOR UPDATE"))
        yield
        connection.rollback()


@pytest.mark.usefixtures("opened", "chain_1_head_locked")
def test_a_posting_on_another_chain_does_not_wait_for_a_locked_head(
    session_factory: sessionmaker[Session],
) -> None:
    with session_factory.begin() as session:
        session.execute(text("SET LOCAL lock_timeout = '2s'"))
        posted = post(
            session,
            TransactionRequest(
                "deposit", "elsewhere", (Transfer(CASHIER.code, chart.wallet("p0", "USD").code, 1),)
            ),
            chain=2,
        )
    assert posted.chain == 2


@pytest.mark.usefixtures("opened", "chain_1_head_locked")
def test_a_posting_on_the_same_chain_waits_for_its_locked_head(
    session_factory: sessionmaker[Session],
) -> None:
    request = TransactionRequest(
        "deposit", "same", (Transfer(CASHIER.code, chart.wallet("p0", "USD").code, 1),)
    )
    with session_factory() as session:
        session.execute(text("SET lock_timeout = '200ms'"))
        with pytest.raises(DatabaseError, match="lock timeout"):
            post(session, request, chain=1)


@pytest.mark.usefixtures("opened")
def test_checking_a_head_reads_as_few_index_entries_however_long_its_chain(
    session_factory: sessionmaker[Session],
) -> None:
    """On a database not analyzed yet, the chain head's trigger on PostgreSQL reads the
    (chain, seq) index's last entry of the chain and the new head's own, a posting, where
    its `max(seq)` was planned to aggregate every entry of the chain (migration 0009)."""
    if session_factory.kw["bind"].dialect.name == "sqlite":
        pytest.skip("SQLite plans max() over an index's leading column as one seek")
    postings = 200
    with session_factory.begin() as session:
        for number in range(postings):
            post(session, _deposit_request(f"long-chain-{number}"), chain=5)
        read = session.execute(
            text(
                "SELECT pg_stat_get_xact_tuples_returned("
                "'ix_ledger_transactions_chain_seq'::regclass)"
            )
        ).scalar_one()
    assert read <= 3 * postings
