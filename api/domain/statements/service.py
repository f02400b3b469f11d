"""A player's money history, read from the ledger alone: transactions, statements, and the
operator's daily player account summary.

Everything is derived from the player's wallet and held accounts' entries, so a statement
agrees with the ledger by construction: opening + deposits - withdrawals - staked + returned
= closing, per currency, where opening and closing are the wallet's balance at the period's
bounds. Hands are counted by their stake transactions.
"""

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from sqlalchemy import Connection, and_, case, func, or_, select
from sqlalchemy.sql import ColumnElement
from sqlalchemy.sql.selectable import CTE

from api.db.models import players_table
from api.domain.hands.ledger import REFERENCE_PREFIX
from api.errors import NotFound
from api.pagination import Page, decode_cursor, next_cursor
from ledger.chart import HELD_PREFIX
from ledger.schema import accounts, entries, transactions

Kind = Literal["deposit", "withdrawal", "stake", "raise", "settlement"]
_KINDS: tuple[Kind, ...] = ("deposit", "withdrawal", "stake", "raise", "settlement")
_WALLET = "wallet:"


@dataclass(frozen=True, slots=True)
class WalletTransaction:
    transaction_id: int
    at: datetime
    kind: Kind
    currency: str
    amount: int  # signed, as the wallet saw it
    balance_after: int
    hand_id: int | None


@dataclass(frozen=True, slots=True)
class StatementLine:
    """One currency of a statement; `player_id` set in the operator's daily summary."""

    currency: str
    opening_balance: int
    deposits: int
    withdrawals: int
    staked: int
    returned: int
    closing_balance: int
    hands: int
    player_id: int | None = None


@dataclass(frozen=True, slots=True)
class _Account:
    id: int
    player_id: int
    currency: str
    wallet: bool


def player_accounts(connection: Connection, player_id: int | None = None) -> list[_Account]:
    """The wallet and held accounts of one player, or of every player."""
    owned = or_(accounts.c.code.like(f"{_WALLET}%"), accounts.c.code.like(f"{HELD_PREFIX}%"))
    if player_id is not None:
        owned = or_(
            accounts.c.code.like(f"{_WALLET}{player_id}:%"),
            accounts.c.code.like(f"{HELD_PREFIX}{player_id}:%"),
        )
    rows = connection.execute(
        select(accounts.c.id, accounts.c.code, accounts.c.currency).where(owned)
    )
    return [
        _Account(id, int(code.split(":")[1]), currency, code.startswith(_WALLET))
        for id, code, currency in rows
    ]


def wallet_transactions(
    connection: Connection,
    player_id: int,
    since: datetime | None,
    until: datetime | None,
    cursor: str | None,
    limit: int,
) -> Page[WalletTransaction]:
    """The player's transactions oldest first, each with the wallet's balance after it (a
    lost hand's settlement moves nothing through the wallet: amount 0)."""
    owned = player_accounts(connection, player_id)
    if not owned:
        return Page((), None)
    moves = _wallet_moves(owned)
    running = select(
        moves,
        func.sum(moves.c.amount)
        .over(partition_by=moves.c.currency, order_by=moves.c.id)
        .label("balance_after"),
    ).subquery("running")
    query = select(running).order_by(running.c.id).limit(limit)
    after = decode_cursor(cursor)
    if after is not None:
        query = query.where(running.c.id > after)
    if since is not None:
        query = query.where(running.c.posted_at >= since)
    if until is not None:
        query = query.where(running.c.posted_at < until)
    rows = list(connection.execute(query))
    items = tuple(
        WalletTransaction(
            transaction_id=row.id,
            at=row.posted_at,
            kind=_kind(row.kind),
            currency=row.currency,
            amount=int(row.amount),
            balance_after=int(row.balance_after),
            hand_id=_hand_id(row.reference),
        )
        for row in rows
    )
    return Page(items, next_cursor([row.id for row in rows], limit))


def _wallet_moves(owned: Sequence[_Account]) -> CTE:
    """Each transaction touching the accounts, with what it moved through the wallet."""
    wallet_ids = [a.id for a in owned if a.wallet]
    return (
        select(
            transactions.c.id,
            transactions.c.posted_at,
            transactions.c.kind,
            transactions.c.reference,
            accounts.c.currency,
            func.sum(
                case((entries.c.account_id.in_(wallet_ids), -entries.c.amount), else_=0)
            ).label("amount"),
        )
        .select_from(entries.join(transactions).join(accounts))
        .where(entries.c.account_id.in_([a.id for a in owned]))
        .group_by(
            transactions.c.id,
            transactions.c.posted_at,
            transactions.c.kind,
            transactions.c.reference,
            accounts.c.currency,
        )
        .cte("moves")
    )


def statements(
    connection: Connection, start: datetime, end: datetime, player_id: int | None = None
) -> list[StatementLine]:
    """One line per player and currency over [start, end): one player's, or (player_id
    None) every player's whose wallet existed by `end`, activity or not."""
    if player_id is not None:
        require_player(connection, player_id)
    owned = player_accounts(connection, player_id)
    lines = _Lines(owned)
    wallet_ids = [a.id for a in owned if a.wallet]
    if wallet_ids:
        for account_id, amount in _balances_before(connection, wallet_ids, start):
            lines.set(account_id, "opening_balance", amount)
        for account_id, amount in _balances_before(connection, wallet_ids, end):
            lines.set(account_id, "closing_balance", amount)
        during = connection.execute(
            select(entries.c.account_id, transactions.c.kind, func.sum(-entries.c.amount))
            .select_from(entries.join(transactions))
            .where(entries.c.account_id.in_(wallet_ids), _within(start, end))
            .group_by(entries.c.account_id, transactions.c.kind)
        )
        for account_id, kind, amount in during:
            lines.move(account_id, kind, int(amount))
        stakes = connection.execute(
            select(entries.c.account_id, func.count())
            .select_from(entries.join(transactions))
            .where(
                entries.c.account_id.in_(wallet_ids),
                transactions.c.kind == "stake",
                _within(start, end),
            )
            .group_by(entries.c.account_id)
        )
        for account_id, count in stakes:
            lines.set(account_id, "hands", int(count))
    return lines.result()


def require_player(connection: Connection, player_id: int) -> None:
    if connection.scalar(select(players_table.c.id).where(players_table.c.id == player_id)) is None:
        raise NotFound("player")


def _balances_before(
    connection: Connection, wallet_ids: list[int], moment: datetime
) -> list[tuple[int, int]]:
    """Each wallet's balance at `moment`: its entries posted before, summed."""
    rows = connection.execute(
        select(entries.c.account_id, func.sum(-entries.c.amount))
        .select_from(entries.join(transactions))
        .where(entries.c.account_id.in_(wallet_ids), transactions.c.posted_at < moment)
        .group_by(entries.c.account_id)
    )
    return [(int(account_id), int(amount)) for account_id, amount in rows]


def _within(start: datetime, end: datetime) -> ColumnElement[bool]:
    return and_(transactions.c.posted_at >= start, transactions.c.posted_at < end)


class _Lines:
    """Statement lines accumulated per wallet account, then frozen."""

    def __init__(self, owned: Iterable[_Account]) -> None:
        self._wallets = {a.id: a for a in owned if a.wallet}
        self._figures = {account_id: dict.fromkeys(_FIGURES, 0) for account_id in self._wallets}

    def set(self, account_id: int, figure: str, value: int) -> None:
        self._figures[account_id][figure] = value

    def move(self, account_id: int, kind: str, wallet_amount: int) -> None:
        figure = {
            "deposit": "deposits",
            "withdrawal": "withdrawals",
            "stake": "staked",
            "raise": "staked",
            "settlement": "returned",
        }.get(kind)
        if figure is None:
            raise ValueError(f"a wallet moved by a {kind!r} transaction, which no statement names")
        sign = 1 if figure in ("deposits", "returned") else -1
        self._figures[account_id][figure] += sign * wallet_amount

    def result(self) -> list[StatementLine]:
        lines = []
        for account_id, account in sorted(
            self._wallets.items(), key=lambda item: (item[1].player_id, item[1].currency)
        ):
            f = self._figures[account_id]
            lines.append(
                StatementLine(
                    currency=account.currency,
                    opening_balance=f["opening_balance"],
                    deposits=f["deposits"],
                    withdrawals=f["withdrawals"],
                    staked=f["staked"],
                    returned=f["returned"],
                    closing_balance=f["closing_balance"],
                    hands=f["hands"],
                    player_id=account.player_id,
                )
            )
        return lines


_FIGURES: Sequence[str] = (
    "opening_balance",
    "closing_balance",
    "deposits",
    "withdrawals",
    "staked",
    "returned",
    "hands",
)


def _kind(value: str) -> Kind:
    for kind in _KINDS:
        if value == kind:
            return kind
    raise ValueError(f"a wallet moved by a {value!r} transaction, which no history names")


def _hand_id(reference: str | None) -> int | None:
    if reference is None or not reference.startswith(REFERENCE_PREFIX):
        return None
    return int(reference.removeprefix(REFERENCE_PREFIX))
