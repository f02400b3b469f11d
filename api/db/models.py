"""ORM models for everything the service records besides money (that is `ledger/`'s).

Hands keep everything a replay needs (seeds, nonce, rules as they were, cards, decision,
balances, times): the game-recall record regulators ask for. Ledger rows are referenced by
their `reference` (`hand:<id>`), not by foreign keys, so the ledger stays ignorant of cards.
"""

from datetime import datetime
from typing import Any, cast

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    ForeignKey,
    Index,
    Integer,
    String,
    Table,
    UniqueConstraint,
    false,
    text,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

from ledger.schema import Id, UTCDateTime

Timestamp = UTCDateTime()
Money = BigInteger


class Base(DeclarativeBase):
    pass


class Player(Base):
    __tablename__ = "players"

    id: Mapped[int] = mapped_column(Id, primary_key=True)
    display_name: Mapped[str | None] = mapped_column(String(100))
    external_ref: Mapped[str | None] = mapped_column(String(255), unique=True)
    created_at: Mapped[datetime] = mapped_column(Timestamp)
    # Whether the player has ever set a limit or an exclusion: read with the player's lock,
    # so a hand or a deposit of a player without any pays nothing more for the checks.
    protected: Mapped[bool] = mapped_column(Boolean, server_default=false(), default=False)
    created_by_token: Mapped[int | None] = mapped_column(Id)


class ApiToken(Base):
    """Only a SHA-256 of each token is kept: a leaked table grants nothing."""

    __tablename__ = "api_tokens"

    id: Mapped[int] = mapped_column(Id, primary_key=True)
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    role: Mapped[str] = mapped_column(String(16))
    name: Mapped[str | None] = mapped_column(String(100))
    player_id: Mapped[int | None] = mapped_column(Id, ForeignKey("players.id"))
    created_at: Mapped[datetime] = mapped_column(Timestamp)
    issued_by: Mapped[int | None] = mapped_column(Id)  # the issuing token; None: the CLI
    expires_at: Mapped[datetime | None] = mapped_column(Timestamp)
    revoked_at: Mapped[datetime | None] = mapped_column(Timestamp)
    revoked_by: Mapped[int | None] = mapped_column(Id)
    last_used_at: Mapped[datetime | None] = mapped_column(Timestamp)


class CasinoTable(Base):
    """A table's rules never change after creation; only whether it is open does."""

    __tablename__ = "casino_tables"

    id: Mapped[int] = mapped_column(Id, primary_key=True)
    name: Mapped[str] = mapped_column(String(100), unique=True)
    currency: Mapped[str] = mapped_column(String(3))
    rules: Mapped[dict[str, Any]] = mapped_column(JSON)
    is_open: Mapped[bool] = mapped_column(Boolean)
    created_at: Mapped[datetime] = mapped_column(Timestamp)
    created_by_token: Mapped[int | None] = mapped_column(Id)


class SeedPair(Base):
    """A player's server/client seed pair; the server seed stays secret until revealed."""

    __tablename__ = "seed_pairs"
    __table_args__ = (
        Index(
            "uq_seed_pairs_one_active_per_player",
            "player_id",
            unique=True,
            sqlite_where=text("revealed_at IS NULL"),
            postgresql_where=text("revealed_at IS NULL"),
        ),
    )

    id: Mapped[int] = mapped_column(Id, primary_key=True)
    player_id: Mapped[int] = mapped_column(Id, ForeignKey("players.id"), index=True)
    server_seed: Mapped[str] = mapped_column(String(64))
    server_seed_hash: Mapped[str] = mapped_column(String(64))
    client_seed: Mapped[str] = mapped_column(String(64))
    next_nonce: Mapped[int] = mapped_column(BigInteger)
    created_at: Mapped[datetime] = mapped_column(Timestamp)
    revealed_at: Mapped[datetime | None] = mapped_column(Timestamp)
    created_by_token: Mapped[int | None] = mapped_column(Id)


class HandRecord(Base):
    __tablename__ = "hands"
    __table_args__ = (
        UniqueConstraint("seed_pair_id", "nonce", name="uq_hands_seed_pair_nonce"),
        Index(
            "uq_hands_one_unfinished_per_player",
            "player_id",
            unique=True,
            sqlite_where=text("status = 'awaiting_decision'"),
            postgresql_where=text("status = 'awaiting_decision'"),
        ),
        Index("ix_hands_player_id_id", "player_id", "id"),
        Index("ix_hands_created_at", "created_at"),
        # Payout reports page settled hands by (settled_at, id) within a range; the hands
        # awaiting a decision (whose settled_at is null) are found by their status in it too.
        Index("ix_hands_status_settled_at_id", "status", "settled_at", "id"),
        # A deleted hand's id is never handed out again (SQLite would reuse the highest).
        {"sqlite_autoincrement": True},
    )

    id: Mapped[int] = mapped_column(Id, primary_key=True)
    player_id: Mapped[int] = mapped_column(Id, ForeignKey("players.id"))
    table_id: Mapped[int] = mapped_column(Id, ForeignKey("casino_tables.id"), index=True)
    seed_pair_id: Mapped[int] = mapped_column(Id, ForeignKey("seed_pairs.id"))
    nonce: Mapped[int] = mapped_column(BigInteger)
    currency: Mapped[str] = mapped_column(String(3))
    rules: Mapped[dict[str, Any]] = mapped_column(JSON)
    status: Mapped[str] = mapped_column(String(24))
    bet: Mapped[int] = mapped_column(Money)
    tie_bet: Mapped[int] = mapped_column(Money)
    raise_amount: Mapped[int] = mapped_column(Money)
    player_card: Mapped[str] = mapped_column(String(2))
    dealer_card: Mapped[str] = mapped_column(String(2))
    war_burned: Mapped[list[str] | None] = mapped_column(JSON)
    war_player_card: Mapped[str | None] = mapped_column(String(2))
    war_dealer_card: Mapped[str | None] = mapped_column(String(2))
    decision: Mapped[str | None] = mapped_column(String(16))
    decided_by: Mapped[str | None] = mapped_column(String(16))
    outcome: Mapped[str | None] = mapped_column(String(16))
    total_staked: Mapped[int] = mapped_column(Money)
    total_returned: Mapped[int | None] = mapped_column(Money)
    net: Mapped[int | None] = mapped_column(Money)
    balance_before: Mapped[int] = mapped_column(Money)
    balance_after: Mapped[int | None] = mapped_column(Money)
    created_at: Mapped[datetime] = mapped_column(Timestamp)
    settled_at: Mapped[datetime | None] = mapped_column(Timestamp)
    engine_version: Mapped[str | None] = mapped_column(String(16))
    rules_hash: Mapped[str | None] = mapped_column(String(64))
    placed_by_token: Mapped[int | None] = mapped_column(Id)
    decided_by_token: Mapped[int | None] = mapped_column(Id)


class PlayerLimit(Base):
    """One change of one limit, kept for ever: the limit in force at an instant is the
    newest change already effective then; a raise waits out the cooling-off period."""

    __tablename__ = "player_limits"
    __table_args__ = (Index("ix_player_limits_player_id_id", "player_id", "id"),)

    id: Mapped[int] = mapped_column(Id, primary_key=True)
    player_id: Mapped[int] = mapped_column(Id, ForeignKey("players.id"))
    kind: Mapped[str] = mapped_column(String(16))
    period: Mapped[str | None] = mapped_column(String(8))
    currency: Mapped[str | None] = mapped_column(String(3))
    amount: Mapped[int | None] = mapped_column(BigInteger)  # None: the limit removed
    effective_at: Mapped[datetime] = mapped_column(Timestamp)
    created_at: Mapped[datetime] = mapped_column(Timestamp)
    token_id: Mapped[int | None] = mapped_column(Id)


class SelfExclusion(Base):
    """A time-out or self-exclusion (`until` None: indefinite); never ended early."""

    __tablename__ = "self_exclusions"
    __table_args__ = (Index("ix_self_exclusions_player_id_id", "player_id", "id"),)

    id: Mapped[int] = mapped_column(Id, primary_key=True)
    player_id: Mapped[int] = mapped_column(Id, ForeignKey("players.id"))
    starts_at: Mapped[datetime] = mapped_column(Timestamp)
    until: Mapped[datetime | None] = mapped_column(Timestamp)
    reason: Mapped[str | None] = mapped_column(String(500))
    created_at: Mapped[datetime] = mapped_column(Timestamp)
    token_id: Mapped[int | None] = mapped_column(Id)


class Event(Base):
    """A significant event: who did what to whom, a link of the events' hash chain.

    Append-only (the database refuses updates and deletes); `events_head` holds the chain's
    newest link, which every append locks, so events are numbered without gaps."""

    __tablename__ = "events"
    __table_args__ = (
        UniqueConstraint("seq", name="uq_events_seq"),
        Index("ix_events_type_id", "type", "id"),
        Index("ix_events_player_id_id", "player_id", "id"),
        Index("ix_events_actor_token_id_id", "actor_token_id", "id"),
        Index("ix_events_at", "at"),
        {"sqlite_autoincrement": True},
    )

    id: Mapped[int] = mapped_column(Id, primary_key=True)
    seq: Mapped[int] = mapped_column(BigInteger)
    at: Mapped[datetime] = mapped_column(Timestamp)
    type: Mapped[str] = mapped_column(String(40))
    actor_token_id: Mapped[int | None] = mapped_column(Id)
    actor_role: Mapped[str | None] = mapped_column(String(16))
    actor_name: Mapped[str | None] = mapped_column(String(100))
    player_id: Mapped[int | None] = mapped_column(Id)
    subject: Mapped[dict[str, Any]] = mapped_column(JSON)
    details: Mapped[dict[str, Any]] = mapped_column(JSON)
    prev_hash: Mapped[str] = mapped_column(String(64))
    hash: Mapped[str] = mapped_column(String(64))


class EventsHead(Base):
    __tablename__ = "events_head"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    seq: Mapped[int] = mapped_column(BigInteger)
    hash: Mapped[str] = mapped_column(String(64))


class WarGameRecord(Base):
    """A free game of the War family: its set-up, seeds and the state between turns.

    `state` holds the face-down piles, which only the engine reads: the player sees their
    sizes. `server_seed` stays secret until the game ends.
    """

    __tablename__ = "war_games"
    __table_args__ = (
        Index("ix_war_games_player_id_id", "player_id", "id"),
        {"sqlite_autoincrement": True},
    )

    id: Mapped[int] = mapped_column(Id, primary_key=True)
    player_id: Mapped[int] = mapped_column(Id, ForeignKey("players.id"))
    variant: Mapped[str] = mapped_column(String(32))
    rules: Mapped[dict[str, Any]] = mapped_column(JSON)
    seats: Mapped[list[str]] = mapped_column(JSON)
    server_seed: Mapped[str] = mapped_column(String(64))
    server_seed_hash: Mapped[str] = mapped_column(String(64))
    client_seed: Mapped[str] = mapped_column(String(64))
    nonce: Mapped[int] = mapped_column(BigInteger)
    status: Mapped[str] = mapped_column(String(16))
    turns: Mapped[int] = mapped_column(Integer)
    state: Mapped[dict[str, Any]] = mapped_column(JSON)
    created_at: Mapped[datetime] = mapped_column(Timestamp)
    finished_at: Mapped[datetime | None] = mapped_column(Timestamp)
    created_by_token: Mapped[int | None] = mapped_column(Id)


class WarGameTurn(Base):
    """One turn of a War game as it was played: the human seats' input and what happened,
    appended once and never changed (the database refuses updates and deletes)."""

    __tablename__ = "war_game_turns"
    __table_args__ = (UniqueConstraint("game_id", "turn", name="uq_war_game_turns_game_turn"),)

    id: Mapped[int] = mapped_column(Id, primary_key=True)
    game_id: Mapped[int] = mapped_column(Id, ForeignKey("war_games.id"))
    turn: Mapped[int] = mapped_column(Integer)
    input: Mapped[dict[str, Any]] = mapped_column(JSON)
    record: Mapped[dict[str, Any]] = mapped_column(JSON)
    created_at: Mapped[datetime] = mapped_column(Timestamp)
    played_by_token: Mapped[int | None] = mapped_column(Id)


class IdempotencyRecord(Base):
    """The first response to a caller's key, committed with the request's own effects."""

    __tablename__ = "idempotency_records"
    __table_args__ = (UniqueConstraint("caller", "key", name="uq_idempotency_caller_key"),)

    id: Mapped[int] = mapped_column(Id, primary_key=True)
    caller: Mapped[str] = mapped_column(String(64))
    key: Mapped[str] = mapped_column(String(255))
    request_hash: Mapped[str] = mapped_column(String(64))
    response_status: Mapped[int] = mapped_column(Integer)
    response_body: Mapped[Any] = mapped_column(JSON)
    created_at: Mapped[datetime] = mapped_column(Timestamp)


def _table(model: type[Base]) -> Table:
    """The Core table behind a model, for the read paths that skip the ORM (audits, reports):
    declarative types `__table__` only as a FromClause."""
    return cast(Table, model.__table__)


hands_table = _table(HandRecord)
players_table = _table(Player)
seed_pairs_table = _table(SeedPair)
casino_tables_table = _table(CasinoTable)
