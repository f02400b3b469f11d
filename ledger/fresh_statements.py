"""The statements of `ledger.fresh`: one builder per shape of statement, cached by its counts
(a hand's batches come in a few shapes), so that each text is built once and psycopg
prepares it once. SQLite runs the balances' UPDATE, the head's lock, the transactions' and
the entries' INSERTs one by one; PostgreSQL the first two as one statement, the last two as
another (`move_balances_locking_head`, `insert_transactions_and_entries`), or, where the
caller holds the locks already (`ledger.fresh.LockedChain`), all three as one
(`write_locked`)."""

from functools import cache

from ledger.driver import Sql

_ACCOUNT_COLUMNS = "id, code, currency, side, min_balance"
LOCK_CHAIN_HEAD = Sql.of("SELECT seq, hash FROM ledger_chain_head WHERE id = :chain")
"""SQLite's: `BEGIN IMMEDIATE` has already locked every writer out."""
MOVE_CHAIN_HEAD = Sql.of("UPDATE ledger_chain_head SET seq = :seq, hash = :hash WHERE id = :chain")
BALANCE = Sql.of("SELECT balance FROM ledger_accounts WHERE code = :code")


def _placeholders(name: str, count: int) -> str:
    return ", ".join(f":{name}_{index}" for index in range(count))


@cache
def select_accounts(count: int) -> Sql:
    return Sql.of(
        f"SELECT {_ACCOUNT_COLUMNS} FROM ledger_accounts "
        f"WHERE code IN ({_placeholders('code', count)})"
    )


@cache
def move_balances(count: int) -> Sql:
    return Sql.of(_move_balances_text(count))


def _move_balances_text(count: int, prefix: str = "") -> str:
    """The balances' UPDATE, its parameters named `<prefix>id_0`... (`MOVE_PARAMETERS`)."""
    ids = [f":{prefix}id_{i}" for i in range(count)]
    delta = " ".join(f"WHEN {ids[i]} THEN :{prefix}delta_{i}" for i in range(count))
    lowest = " ".join(f"WHEN {ids[i]} THEN :{prefix}lowest_{i}" for i in range(count))
    ceiling = " ".join(f"WHEN {ids[i]} THEN :{prefix}ceiling_{i}" for i in range(count))
    floor = " ".join(f"WHEN {ids[i]} THEN :{prefix}floor_{i}" for i in range(count))
    # The 64-bit bounds compare the balance before the move with bounds computed in Python,
    # so that no sum in SQL can overflow (PostgreSQL would raise, SQLite turn it to a float).
    return (
        f"UPDATE ledger_accounts SET balance = balance + CASE id {delta} END "
        f"WHERE id IN ({', '.join(ids)}) "
        f"AND balance <= CASE id {ceiling} END AND balance >= CASE id {floor} END "
        f"AND (min_balance IS NULL OR balance + CASE id {lowest} END >= min_balance) "
        "RETURNING id"
    )


@cache
def take_back(count: int) -> Sql:
    delta = " ".join(f"WHEN :id_{i} THEN :delta_{i}" for i in range(count))
    return Sql.of(
        f"UPDATE ledger_accounts SET balance = balance - CASE id {delta} END "
        f"WHERE id IN ({_placeholders('id', count)})"
    )


_TRANSACTION_COLUMNS = (
    "seq, chain, kind, reference, idempotency_key, request_hash, metadata, posted_at, "
    "prev_hash, hash"
)
TRANSACTION_PARAMETERS = (
    "seq", "chain", "kind", "reference", "key", "request_hash", "metadata", "posted_at",
    "prev_hash", "hash",
)  # fmt: skip
ENTRY_PARAMETERS = ("transaction", "account", "currency", "amount")
MOVE_PARAMETERS = ("id", "delta", "lowest", "ceiling", "floor")
LOCKED_MOVE_PREFIX = "move_"
"""`write_locked`'s moves' parameters: `move_id_0`..., apart from its transactions' `id_0`."""


@cache
def row_parameters(names: tuple[str, ...], index: int) -> tuple[str, ...]:
    """The names of the parameters of a statement's row `index` (`seq_0`, `chain_0`...), as
    its text spells them: formatted once, where every posting names a few dozen."""
    return tuple(f"{name}_{index}" for name in names)


def _rows(names: tuple[str, ...], count: int) -> str:
    return ", ".join(
        "(" + ", ".join(f":{name}" for name in row_parameters(names, index)) + ")"
        for index in range(count)
    )


def _transaction_rows(count: int, *, with_id: bool = False) -> str:
    return _rows(("id", *TRANSACTION_PARAMETERS) if with_id else TRANSACTION_PARAMETERS, count)


@cache
def insert_transactions(count: int) -> Sql:
    return Sql.of(
        f"INSERT INTO ledger_transactions ({_TRANSACTION_COLUMNS}) "
        f"VALUES {_transaction_rows(count)} RETURNING id, seq"
    )


def _entry_rows(count: int) -> str:
    return _rows(ENTRY_PARAMETERS, count)


_INSERT_ENTRIES = "INSERT INTO ledger_entries (transaction_id, account_id, currency, amount)"


@cache
def insert_entries(count: int) -> Sql:
    return Sql.of(f"{_INSERT_ENTRIES} VALUES {_entry_rows(count)}")


@cache
def move_balances_locking_head(moves: int, transactions: int) -> Sql:
    """PostgreSQL's: every balance moved (`_move_balances_text`), then, only if every move was
    made, the chain's head locked and `transactions` ids drawn; one row, whatever happened:
    the ids of the accounts moved, the head's seq and hash, the ids (NULL where refused).

    The head's scan is gated on the count of the moves made, which PostgreSQL works out
    first, so the balances' rows are locked before the head's, as when each was a statement
    of its own. The lock is taken in the CTE, below the ids, so they are drawn once, after
    it: in one query level `nextval` runs before the row lock, and a transaction that waited
    for the head runs it again once the head has moved (PostgreSQL rechecks the row),
    wasting the ids it drew first."""
    drawn = ", ".join(
        ["CASE WHEN head.seq IS NULL THEN NULL ELSE nextval('ledger_transactions_id_seq') END"]
        * transactions
    )
    return Sql.of(
        f"WITH moved AS ({_move_balances_text(moves)}), "
        "head AS (SELECT seq, hash FROM ledger_chain_head "
        "WHERE id = :chain AND (SELECT count(*) FROM moved) = :moves FOR UPDATE) "
        f"SELECT ARRAY(SELECT id FROM moved), head.seq, head.hash, {drawn} "
        "FROM (VALUES (1)) AS one LEFT JOIN head ON true"
    )


@cache
def insert_transactions_and_entries(transactions: int, entries: int) -> Sql:
    """PostgreSQL's: the transactions, ids given, and their entries in one statement; the
    entries' foreign keys are checked at its end, when the transactions are there."""
    return Sql.of(
        f"WITH posted AS (INSERT INTO ledger_transactions (id, {_TRANSACTION_COLUMNS}) "
        f"VALUES {_transaction_rows(transactions, with_id=True)}) "
        f"{_INSERT_ENTRIES} VALUES {_entry_rows(entries)}"
    )


@cache
def write_locked(moves: int, transactions: int, entries: int) -> Sql:
    """PostgreSQL's, for a caller that holds the accounts' and the head's locks and has
    checked every limit against the balances it read under them: the balances moved, the
    transactions, ids given, and their entries, in one statement whose answer nobody needs.
    The UPDATE keeps its limits all the same, and the statement fails (a division by zero)
    unless every balance moved: a limit the caller missed fails the transaction instead of
    posting past it. The moves' parameters are named apart from the transactions' ids
    (`LOCKED_MOVE_PREFIX`)."""
    return Sql.of(
        f"WITH moved AS ({_move_balances_text(moves, LOCKED_MOVE_PREFIX)}), "
        f"posted AS (INSERT INTO ledger_transactions (id, {_TRANSACTION_COLUMNS}) "
        f"VALUES {_transaction_rows(transactions, with_id=True)}), "
        f"entered AS ({_INSERT_ENTRIES} VALUES {_entry_rows(entries)}) "
        "SELECT 1 / CAST((SELECT count(*) FROM moved) = :moves AS integer)"
    )


@cache
def posting_locks(accounts: int) -> Sql:
    """PostgreSQL's: a posting's locks taken ahead of it, by the schema's function
    (`ledger_posting_locks`, migration `0014_opening_locks_the_chain`)."""
    return Sql.of(f"SELECT ledger_posting_locks(:chain, :ids, {_placeholders('code', accounts)})")
