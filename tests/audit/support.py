"""Helpers shared by the audit and report tests: hands played through the real services.

Playing through `api.services` (one transaction per step, as the API does) keeps these
tests fast while every row, ledger posting and hash is the real thing.
"""

from collections.abc import Iterator
from contextlib import contextmanager

import httpx
import pytest
from litestar import Litestar
from litestar.testing import TestClient
from sqlalchemy import Connection, Engine, func, select, text, update

from api.db.database import Database
from api.db.models import CasinoTable
from api.domain.cashier import service as cashier
from api.domain.hands import service as hands
from api.domain.hands.details import HandDetails
from api.domain.players import service as players
from api.domain.tables.service import ensure_standard_table
from casino.hand import Action
from ledger.chain import transaction_hash
from ledger.chains import next_seq
from ledger.schema import GENESIS_HASH, accounts, chain_head, entries, transactions


@contextmanager
def connected(url: str) -> Iterator[Database]:
    database = Database.connect(url)
    try:
        with database.transaction() as session:
            ensure_standard_table(session, "USD")
        yield database
    finally:
        database.dispose()


def standard_table(database: Database) -> int:
    with database.reading() as session:
        table_id = session.scalar(select(CasinoTable.id).where(CasinoTable.name == "standard"))
    assert table_id is not None
    return table_id


def new_player(database: Database, deposit: int = 1_000_000) -> int:
    with database.transaction() as session:
        player_id = players.create_player(session, "Ada", None).id
        if deposit:
            cashier.deposit(session, player_id, deposit, "USD", "USD")
    return player_id


def deposit(database: Database, player_id: int, amount: int) -> None:
    with database.transaction() as session:
        cashier.deposit(session, player_id, amount, "USD", "USD")


def open_hand(database: Database, player_id: int, bet: int = 1000, tie_bet: int = 0) -> HandDetails:
    with database.transaction() as session:
        return hands.open_hand(session, player_id, standard_table(database), bet, tie_bet)


def decide(database: Database, hand_id: int, player_id: int, action: str) -> HandDetails:
    with database.transaction() as session:
        return hands.decide_hand(session, hand_id, Action(action), player_id=player_id)


def play_tie(database: Database, player_id: int, bet: int = 1000, tie_bet: int = 0) -> HandDetails:
    """Open hands until one ties (left awaiting a decision); the others settle at once."""
    for _ in range(1000):
        hand = open_hand(database, player_id, bet, tie_bet)
        if hand.status == "awaiting_decision":
            return hand
    raise AssertionError("no tie in 1000 hands")


def play_settled(
    database: Database, player_id: int, bet: int = 1000, tie_bet: int = 0, action: str = "war"
) -> HandDetails:
    """One settled hand; a tie is decided with `action`."""
    hand = open_hand(database, player_id, bet, tie_bet)
    if hand.status == "awaiting_decision":
        hand = decide(database, hand.id, player_id, action)
    return hand


def stake_wallet_entry(engine: Engine, hand_id: int) -> tuple[int, int]:
    """The hand's stake transaction id and the id of its wallet entry: a tamper target."""
    with engine.connect() as connection:
        txn_id, entry_id = connection.execute(
            select(transactions.c.id, entries.c.id)
            .join(entries, entries.c.transaction_id == transactions.c.id)
            .join(accounts, accounts.c.id == entries.c.account_id)
            .where(
                transactions.c.reference == f"hand:{hand_id}",
                transactions.c.kind == "stake",
                accounts.c.code.like("wallet:%"),
            )
        ).one()
    return int(txn_id), int(entry_id)


def rechain_ledger(engine: Engine) -> None:
    """Renumber, re-hash and re-balance the whole ledger after rows were removed: what an
    attacker with raw SQL access and the (published) hashing rule does to hide a deletion."""
    with engine.begin() as connection:
        codes = {
            account_id: (code, currency)
            for account_id, code, currency in connection.execute(
                select(accounts.c.id, accounts.c.code, accounts.c.currency)
            )
        }
        prev_hash, seq, chain = GENESIS_HASH, 0, 0
        rows = connection.execute(
            select(
                transactions.c.chain,
                transactions.c.id,
                transactions.c.kind,
                transactions.c.reference,
                transactions.c.idempotency_key,
                transactions.c["metadata"],
                transactions.c.posted_at,
            ).order_by(transactions.c.chain, transactions.c.seq)
        ).all()
        for txn_chain, txn_id, kind, reference, key, metadata, posted_at in rows:
            if txn_chain != chain:
                _move_head(connection, chain, seq, prev_hash)
                prev_hash, seq, chain = GENESIS_HASH, 0, txn_chain
            seq = next_seq(chain, seq)
            legs = [
                (*codes[account_id], int(amount))
                for account_id, amount in connection.execute(
                    select(entries.c.account_id, entries.c.amount).where(
                        entries.c.transaction_id == txn_id
                    )
                )
            ]
            digest = transaction_hash(
                seq=seq,
                kind=kind,
                reference=reference,
                idempotency_key=key,
                metadata=metadata,
                posted_at=posted_at,
                entries=legs,
                prev_hash=prev_hash,
            )
            connection.execute(
                update(transactions)
                .where(transactions.c.id == txn_id)
                .values(seq=seq, prev_hash=prev_hash, hash=digest)
            )
            prev_hash = digest
        _move_head(connection, chain, seq, prev_hash)
        for account_id, side in connection.execute(select(accounts.c.id, accounts.c.side)).all():
            total = connection.execute(
                select(func.coalesce(func.sum(entries.c.amount), 0)).where(
                    entries.c.account_id == account_id
                )
            ).scalar_one()
            balance = int(total) if side == "debit" else -int(total)
            connection.execute(
                update(accounts).where(accounts.c.id == account_id).values(balance=balance)
            )


def _move_head(connection: Connection, chain: int, seq: int, digest: str) -> None:
    connection.execute(
        update(chain_head).where(chain_head.c.id == chain).values(seq=seq, hash=digest)
    )


def execute(engine: Engine, statement: str, **params: object) -> None:
    with engine.begin() as connection:
        connection.execute(text(statement), params)


def use_database(monkeypatch: pytest.MonkeyPatch, url: str, **settings: str) -> None:
    """Point the command line at `url` (and any other CASINO_WAR_* setting)."""
    from api.settings import get_settings

    monkeypatch.setenv("CASINO_WAR_DATABASE_URL", url)
    for name, value in settings.items():
        monkeypatch.setenv(f"CASINO_WAR_{name.upper()}", value)
    get_settings.cache_clear()


class Caller:
    """A test client holding one bearer token."""

    def __init__(self, client: TestClient[Litestar], token: str) -> None:
        self.client = client
        self.token = token

    def get(self, path: str, accept: str | None = None, **params: str) -> httpx.Response:
        headers = {"Authorization": f"Bearer {self.token}"}
        if accept is not None:
            headers["Accept"] = accept
        return self.client.get(path, headers=headers, params=params)


def token(database: Database, role: str, player_id: int | None = None) -> str:
    from api.domain.tokens.service import Role, issue_token

    with database.transaction() as session:
        return issue_token(session, Role(role), name=f"test {role}", player_id=player_id)


def hand_transaction_ids(engine: Engine, hand_id: int, kind: str | None = None) -> list[int]:
    """The ids of the ledger transactions referencing a hand (one kind, or all), in order."""
    query = select(transactions.c.id).where(transactions.c.reference == f"hand:{hand_id}")
    if kind is not None:
        query = query.where(transactions.c.kind == kind)
    with engine.connect() as connection:
        return list(connection.execute(query.order_by(transactions.c.seq)).scalars())
