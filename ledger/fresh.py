"""Posting a batch whose idempotency keys are new by construction, in five statements (three
on PostgreSQL, two with its locks taken ahead of it).

`posting.post_all` serves every caller: it looks its accounts up, checks every key for an
earlier posting (so that a retry replays), and moves each account's balance with its own
UPDATE. A caller that remembers its accounts (`AccountBook`: an account's row never
changes once opened, but for its balance) and whose keys cannot have been posted before
(a fresh hand's, a deposit's random one) needs none of that; this module posts its batch
on the driver (`ledger.driver`) in five statements: every balance in one UPDATE, each limit
checked there at the lowest point the account reaches; the chain head locked; one INSERT
of the transactions and one of their entries; the head moved on. On PostgreSQL, where a
statement costs its sender about as much as the database's work, the balances' UPDATE, the
head's lock and the new transactions' ids are one statement, and the transactions and
their entries another. A caller that took the locks already, in a statement of its own
(`LockedChain`), has its limits decided here from the balances it read under them, and
its balances, transactions and entries go as one statement that needs no answer.

The guarantees are the ledger's own: every transaction balances per currency (checked
before any write), limits hold (in the UPDATE itself), the links are those `post_all`
makes (`ledger.batch`), the tables are immutable (their triggers), and a key posted twice
is refused by its unique constraint instead of replayed.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, NoReturn

from sqlalchemy.orm import Session

from ledger import fresh_statements as statements
from ledger.batch import (
    Account,
    BalanceMove,
    Link,
    Linked,
    Pending,
    balance_moves,
    check_currencies,
    link,
)
from ledger.chains import is_chain
from ledger.driver import Driver
from ledger.errors import (
    AccountConflict,
    AmountTooLarge,
    InvalidTransaction,
    LimitExceeded,
    UnknownAccount,
)
from ledger.model import AccountSpec, TransactionRequest
from ledger.posting import open_account


@dataclass(frozen=True, slots=True)
class AccountRow(Account):
    """What never changes about an opened account: its id, currency, side and limit."""

    code: str
    min_balance: int | None

    def matches(self, spec: AccountSpec) -> bool:
        return (self.currency, self.side, self.min_balance) == (
            spec.currency,
            spec.side.value,
            spec.min_balance,
        )


class AccountBook:
    """Account rows by code, remembered once read.

    Only rows read in a transaction that has opened no account are remembered: such a read
    sees committed rows only, so a row remembered can never be one whose opening was rolled
    back (whose id SQLite would hand out again).
    """

    def __init__(self) -> None:
        self._rows: dict[str, AccountRow] = {}

    def find(
        self, driver: Driver, codes: Iterable[str], *, remember: bool = True
    ) -> dict[str, AccountRow]:
        """The rows of the accounts among `codes` that are open."""
        wanted = list(codes)
        found = {code: self._rows[code] for code in wanted if code in self._rows}
        missing = sorted(set(wanted) - found.keys())
        if missing:
            found_rows = driver.all(
                statements.select_accounts(len(missing)), _numbered("code", missing)
            )
            for row in found_rows:
                account = AccountRow(
                    id=row[0], currency=row[2], side=row[3], code=row[1], min_balance=row[4]
                )
                found[account.code] = account
                if remember:
                    self._rows[account.code] = account
        return found

    def opening(
        self, session: Session, driver: Driver, specs: Sequence[AccountSpec]
    ) -> dict[str, AccountRow]:
        """The rows of the accounts `specs` describe, opening those not open yet
        (`posting.open_account`: race-safe); an open account unlike its spec is refused."""
        codes = [spec.code for spec in specs]
        committed_only = session.info.get(_OPENED_IN, _NEVER) is not session.get_transaction()
        rows = self.find(driver, codes, remember=committed_only)
        if len(rows) < len(specs):
            for spec in specs:
                if spec.code not in rows:
                    open_account(session, spec)
            session.info[_OPENED_IN] = session.get_transaction()
            rows = self.find(driver, codes, remember=False)
        for spec in specs:
            if not rows[spec.code].matches(spec):
                raise AccountConflict(spec.code)
        return rows


_OPENED_IN = "ledger.fresh.opened_in"
"""`session.info` key: the transaction in which `AccountBook.opening` last opened accounts."""
_NEVER = object()
"""No transaction: a session that has never opened accounts, which may not be in one yet
(`ledger.driver.driving`)."""


def read_balance(driver: Driver, code: str) -> int:
    """An account's normal-side balance; 0 for one never opened (nothing has moved it)."""
    row = driver.first(statements.BALANCE, {"code": code})
    return 0 if row is None else int(row[0])


@dataclass(frozen=True, slots=True)
class LockedChain:
    """What a caller read while it took a posting's locks itself, ahead of its writes
    (PostgreSQL, by `ledger_posting_locks`, of migration `0014_opening_locks_the_chain`):
    the balances of the accounts the batch may move, by code, each row locked; the chain's
    head, locked after them; and transaction ids drawn from their sequence once it was.

    With them the batch needs no answer from the database: its limits are decided here, and
    its writes wait for the COMMIT, a round trip fewer."""

    balances: Mapping[str, int]
    head: Link
    ids: Sequence[int]

    @classmethod
    def read(cls, answer: Sequence[Any] | None) -> LockedChain | None:
        """`ledger_posting_locks`'s answer, decoded from its JSON: None where it locked no
        head (an account not open yet)."""
        if answer is None:
            return None
        chain, balances, head_seq, head_hash, ids = answer
        return cls(
            {code: int(balance) for code, balance in balances.items()},
            Link(int(chain), int(head_seq), head_hash),
            [int(drawn) for drawn in ids],
        )


def lock_ahead(driver: Driver, chain: int, codes: Sequence[str], *, ids: int) -> LockedChain | None:
    """PostgreSQL: a posting's locks, taken now, in a statement of their own, for a caller
    that reads something first (a decision its hand) and so cannot take them in an earlier
    statement: the balances it reads are then the ones it posts against, and its writes go
    with the COMMIT. None on SQLite (`BEGIN IMMEDIATE` holds every writer off) and where an
    account is not open."""
    if not driver.is_postgresql:
        return None
    parameters = {"chain": chain, "ids": ids} | _numbered("code", codes)
    return LockedChain.read(driver.scalar(statements.posting_locks(len(codes)), parameters))


def post_new(
    driver: Driver,
    requests: Sequence[TransactionRequest],
    accounts: Mapping[str, AccountRow],
    *,
    chain: int,
    posted_at: datetime,
    locked: LockedChain | None = None,
) -> list[int]:
    """Post the batch as the next links of `chain`; the new transactions' ids, in order.

    `accounts` must hold the row of every account the batch moves. A limit the batch would
    break raises LimitExceeded with every balance as it was; a caller that checked its
    balances first never sees it. `locked`, on PostgreSQL, is the chain's locks already
    held, with as many ids drawn as the batch has transactions, or more.
    """
    if not is_chain(chain):
        raise InvalidTransaction(f"there is no chain {chain!r}")
    if not requests:
        raise InvalidTransaction("a batch needs at least one transaction")
    named = {
        code for request in requests for t in request.transfers for code in (t.debit, t.credit)
    }
    if named - accounts.keys():
        raise UnknownAccount(*sorted(named - accounts.keys()))
    pendings = [Pending.of_request(request) for request in requests]
    check_currencies(pendings, accounts)
    moves = balance_moves(pendings, accounts)
    if locked is not None and driver.is_postgresql:
        if locked.head.chain != chain:
            raise InvalidTransaction(f"the head locked is chain {locked.head.chain}'s")
        ids, links = _append_locked(driver, locked, moves, pendings, accounts, posted_at)
    elif driver.is_postgresql:
        ids, links = _append_in_two_statements(driver, chain, moves, pendings, accounts, posted_at)
    else:
        _move_balances(driver, moves)
        head = driver.first(statements.LOCK_CHAIN_HEAD, {"chain": chain})
        assert head is not None  # every chain has its head row (migration 0004)
        links = link(pendings, accounts, posted_at, Link(chain, int(head[0]), head[1]))
        ids = _insert_transactions(driver, chain, links, posted_at)
        driver.execute(
            statements.insert_entries(_entry_count(links)), _entry_parameters(ids, links, accounts)
        )
    last = links[-1]
    driver.execute(statements.MOVE_CHAIN_HEAD, {"chain": chain, "seq": last.seq, "hash": last.hash})
    return ids


def _append_in_two_statements(
    driver: Driver,
    chain: int,
    moves: Sequence[BalanceMove],
    pendings: Sequence[Pending],
    accounts: Mapping[str, AccountRow],
    posted_at: datetime,
) -> tuple[list[int], list[Linked]]:
    """PostgreSQL: every balance moved, the head locked and the new transactions' ids drawn
    from their sequence in one statement; then the transactions and their entries in
    another, which needs no answer (on PostgreSQL a statement costs its sender about as
    much CPU as the database's work).

    The balances' rows are locked before the head's, as they were when each was a statement
    of its own; the ids are drawn once the head is locked, so a chain's transaction ids still
    rise with its seq; the entries keep the batch's order of ids. A limit that refuses a
    move leaves the head unlocked and no id drawn."""
    parameters = _move_parameters(moves) | {"chain": chain, "moves": len(moves)}
    row = driver.first(statements.move_balances_locking_head(len(moves), len(pendings)), parameters)
    assert row is not None  # the statement's one row, whatever was moved
    moved, head = set(row[0]), row[1:]
    if len(moved) < len(moves):
        _refuse(driver, moves, moved)
    assert head[0] is not None  # every chain has its head row (migration 0004)
    links = link(pendings, accounts, posted_at, Link(chain, int(head[0]), head[1]))
    ids = sorted(int(drawn) for drawn in head[2:])
    parameters = _transaction_parameters(driver, chain, links, posted_at)
    parameters |= _numbered("id", ids)
    parameters |= _entry_parameters(ids, links, accounts)
    written = statements.insert_transactions_and_entries(len(links), _entry_count(links))
    driver.execute(written, parameters)
    return ids, links


def _append_locked(
    driver: Driver,
    locked: LockedChain,
    moves: Sequence[BalanceMove],
    pendings: Sequence[Pending],
    accounts: Mapping[str, AccountRow],
    posted_at: datetime,
) -> tuple[list[int], list[Linked]]:
    """PostgreSQL, with the locks held (`LockedChain`): every limit decided from the balances
    read under them, refused as `_refuse` would refuse it, before anything is written; then
    the balances, the transactions and their entries as one write that waits for the next
    statement sent."""
    if unlocked := {move.code for move in moves} - locked.balances.keys():
        raise InvalidTransaction(f"the batch moves accounts not locked: {sorted(unlocked)}")
    for move in moves:
        _refuse_unless_allowed(move, locked.balances[move.code], accounts[move.code])
    links = link(pendings, accounts, posted_at, locked.head)
    if len(locked.ids) < len(links):
        raise InvalidTransaction("fewer transaction ids were drawn than the batch posts")
    ids = sorted(locked.ids)[: len(links)]
    prefix = statements.LOCKED_MOVE_PREFIX
    parameters = {prefix + name: value for name, value in _move_parameters(moves).items()}
    parameters["moves"] = len(moves)
    parameters |= _transaction_parameters(driver, locked.head.chain, links, posted_at)
    parameters |= _numbered("id", ids)
    parameters |= _entry_parameters(ids, links, accounts)
    driver.execute(statements.write_locked(len(moves), len(links), _entry_count(links)), parameters)
    return ids, links


def _refuse_unless_allowed(move: BalanceMove, balance: int, account: AccountRow) -> None:
    """The balances' UPDATE's own conditions, on a balance read under its row's lock."""
    if not move.floor <= balance <= move.ceiling:
        raise AmountTooLarge(move.code)
    if account.min_balance is not None and balance + move.lowest < account.min_balance:
        raise LimitExceeded(move.code)


def _transaction_parameters(
    driver: Driver, chain: int, links: Sequence[Linked], posted_at: datetime
) -> dict[str, object]:
    parameters: dict[str, object] = {}
    stored_at = driver.time(posted_at)
    for index, linked in enumerate(links):
        item = linked.pending
        values = (
            linked.seq,
            chain,
            item.kind,
            item.reference,
            item.idempotency_key,
            item.fingerprint,
            driver.json(item.metadata),
            stored_at,
            linked.prev_hash,
            linked.hash,
        )
        names = statements.row_parameters(statements.TRANSACTION_PARAMETERS, index)
        parameters.update(zip(names, values, strict=True))
    return parameters


def _insert_transactions(
    driver: Driver, chain: int, links: Sequence[Linked], posted_at: datetime
) -> list[int]:
    parameters = _transaction_parameters(driver, chain, links, posted_at)
    rows = driver.all(statements.insert_transactions(len(links)), parameters)
    # Matched back by seq: the order of RETURNING rows is not promised.
    id_by_seq = {int(seq): int(transaction_id) for transaction_id, seq in rows}
    return [id_by_seq[linked.seq] for linked in links]


def _entry_count(links: Sequence[Linked]) -> int:
    return sum(len(linked.entries) for linked in links)


def _numbered(name: str, values: Sequence[object]) -> dict[str, object]:
    return {f"{name}_{index}": value for index, value in enumerate(values)}


def _move_balances(driver: Driver, moves: Sequence[BalanceMove]) -> None:
    """Every balance in one UPDATE. An account whose limit the move would break at its
    lowest point is not matched: the moves made are taken back, so that a refusal leaves
    every balance as it was, and the refusal names that account: one whose balance would
    leave the 64-bit range (AmountTooLarge), else one whose limit would break
    (LimitExceeded); an account not found does not exist (a row remembered wrongly)."""
    moving = statements.move_balances(len(moves))
    moved = {row[0] for row in driver.all(moving, _move_parameters(moves))}
    if len(moved) < len(moves):
        _refuse(driver, moves, moved)


def _move_parameters(moves: Sequence[BalanceMove]) -> dict[str, object]:
    parameters: dict[str, object] = {}
    for index, move in enumerate(moves):
        values = (move.account_id, move.delta, move.lowest, move.ceiling, move.floor)
        names = statements.row_parameters(statements.MOVE_PARAMETERS, index)
        parameters.update(zip(names, values, strict=True))
    return parameters


def _refuse(driver: Driver, moves: Sequence[BalanceMove], moved: Collection[int]) -> NoReturn:
    """Take back the moves made, so that the refusal leaves every balance as it was, and
    raise the refusal of the first move not made."""
    taken_back = [move for move in moves if move.account_id in moved]
    if taken_back:
        driver.execute(
            statements.take_back(len(taken_back)),
            {
                key: value
                for index, move in enumerate(taken_back)
                for key, value in ((f"id_{index}", move.account_id), (f"delta_{index}", move.delta))
            },
        )
    refused = next(move for move in moves if move.account_id not in moved)
    balance = driver.scalar(statements.BALANCE, {"code": refused.code})
    if balance is None:
        raise UnknownAccount(refused.code)
    if not refused.floor <= int(balance) <= refused.ceiling:
        raise AmountTooLarge(refused.code)
    raise LimitExceeded(refused.code)


def _entry_parameters(
    ids: Sequence[int], links: Sequence[Linked], accounts: Mapping[str, AccountRow]
) -> dict[str, object]:
    """The entries of the batch, in its order, each under its transaction's id."""
    parameters: dict[str, object] = {}
    index = 0
    for transaction_id, linked in zip(ids, links, strict=True):
        for entry in linked.entries:
            values = (transaction_id, accounts[entry.account].id, entry.currency, entry.amount)
            names = statements.row_parameters(statements.ENTRY_PARAMETERS, index)
            parameters.update(zip(names, values, strict=True))
            index += 1
    return parameters
