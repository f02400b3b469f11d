"""The ledger's tables. Immutability triggers are created by the migrations, per dialect."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    CheckConstraint,
    DateTime,
    Dialect,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Table,
    TypeDecorator,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

from ledger.chains import CHAINS

GENESIS_HASH = "0" * 64

NAMING_CONVENTION = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

# BIGINT ids on PostgreSQL; on SQLite only INTEGER PRIMARY KEY is the auto-assigned rowid.
Id = BigInteger().with_variant(Integer(), "sqlite")


class UTCDateTime(TypeDecorator[datetime]):
    """A timezone-aware UTC datetime on both databases.

    PostgreSQL stores `timestamptz`; SQLite has no time zones, so the value is stored as
    naive UTC and the zone is put back on the way out. Naive datetimes are refused so that
    a local time can never be mistaken for UTC.
    """

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        value = _in_utc(value)
        return value.replace(tzinfo=None) if dialect.name == "sqlite" else value

    def process_result_value(self, value: Any, dialect: Dialect) -> datetime | None:  # noqa: ARG002
        if value is None:
            return None
        assert isinstance(value, datetime)
        if value.tzinfo is None:
            return value.replace(tzinfo=UTC)
        return value.astimezone(UTC)


def _in_utc(moment: datetime) -> datetime:
    if moment.tzinfo is None:
        raise ValueError("naive datetime: the ledger stores timezone-aware UTC times")
    return moment.astimezone(UTC)


def sqlite_time(moment: datetime) -> str:
    """The text `UTCDateTime` stores on SQLite (naive UTC, to the microsecond), written at
    once for the statements run on the driver (`ledger.driver`): through SQLAlchemy's
    processors it took four calls and a format of seven named fields, four times a hand
    (`tests/ledger/test_ledger_driver.py` holds the two equal)."""
    return _in_utc(moment).replace(tzinfo=None).isoformat(" ", "microseconds")


class LedgerBase(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING_CONVENTION)


class LedgerAccount(LedgerBase):
    """An account; `balance` is its normal-side balance, kept in step with its entries."""

    __tablename__ = "ledger_accounts"
    __table_args__ = (
        CheckConstraint("side IN ('debit', 'credit')", name="side"),
        CheckConstraint("min_balance IS NULL OR balance >= min_balance", name="balance_limit"),
    )

    id: Mapped[int] = mapped_column(Id, primary_key=True)
    code: Mapped[str] = mapped_column(String(200), unique=True)
    currency: Mapped[str] = mapped_column(String(16))
    side: Mapped[str] = mapped_column(String(6))
    min_balance: Mapped[int | None] = mapped_column(BigInteger)
    balance: Mapped[int] = mapped_column(BigInteger)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())


class LedgerTransaction(LedgerBase):
    """A posted transaction, a link of the hash chain. Append-only."""

    __tablename__ = "ledger_transactions"
    __table_args__ = (
        CheckConstraint("seq >= 1", name="seq_positive"),
        # A chain's links in order: the verifier's walk and the chain head's trigger.
        Index("ix_ledger_transactions_chain_seq", "chain", "seq"),
    )

    id: Mapped[int] = mapped_column(Id, primary_key=True)
    seq: Mapped[int] = mapped_column(BigInteger, unique=True)
    # Which hash chain the transaction is a link of (ledger.chains); 1 before there were several.
    chain: Mapped[int] = mapped_column(Integer, server_default="1")
    kind: Mapped[str] = mapped_column(String(64))
    reference: Mapped[str | None] = mapped_column(String(255), index=True)
    idempotency_key: Mapped[str] = mapped_column(String(255), unique=True)
    # Fingerprint of the request's content, compared when an idempotency key is reused.
    request_hash: Mapped[str] = mapped_column(String(64))
    meta: Mapped[dict[str, Any]] = mapped_column("metadata", JSON)
    posted_at: Mapped[datetime] = mapped_column(UTCDateTime())
    prev_hash: Mapped[str] = mapped_column(String(64))
    # Not unique of its own: it covers `seq`, which is (migration 0013_drop_chain_hash_unique).
    hash: Mapped[str] = mapped_column(String(64))


class LedgerEntry(LedgerBase):
    """One signed leg of a transaction: + debit, - credit. Append-only."""

    __tablename__ = "ledger_entries"
    __table_args__ = (
        CheckConstraint("amount <> 0", name="amount_nonzero"),
        # An account's entries in transaction order: balances re-summed by the verifier,
        # and a wallet's movements within a range of the ledger (the hand audit).
        Index("ix_ledger_entries_account_id_transaction_id", "account_id", "transaction_id"),
        Index("ix_ledger_entries_transaction_id", "transaction_id"),
    )

    id: Mapped[int] = mapped_column(Id, primary_key=True)
    transaction_id: Mapped[int] = mapped_column(ForeignKey("ledger_transactions.id"))
    account_id: Mapped[int] = mapped_column(ForeignKey("ledger_accounts.id"))
    currency: Mapped[str] = mapped_column(String(16))
    amount: Mapped[int] = mapped_column(BigInteger)


class LedgerChainHead(LedgerBase):
    """One row per hash chain (id = chain number) holding its newest link; posting locks
    its chain's row last."""

    __tablename__ = "ledger_chain_head"
    __table_args__ = (CheckConstraint(f"id BETWEEN 1 AND {CHAINS}", name="chain_number"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    seq: Mapped[int] = mapped_column(BigInteger)
    hash: Mapped[str] = mapped_column(String(64))


accounts: Table = LedgerAccount.__table__  # type: ignore[assignment]
transactions: Table = LedgerTransaction.__table__  # type: ignore[assignment]
entries: Table = LedgerEntry.__table__  # type: ignore[assignment]
chain_head: Table = LedgerChainHead.__table__  # type: ignore[assignment]
