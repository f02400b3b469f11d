"""The statements of a hand's unit of work, run on the driver (`ledger.driver`).

Every read that locks and checks what a request needs is one statement, and every write
one statement per kind, so that a hand costs the server little more than its round trips.
The unfinished-hand test has its status written into the statement (`players.turn`'s on
SQLite, the function's of migration `0011_opening_reads_after_lock` on PostgreSQL), so that
the database uses the partial index of hands awaiting a decision: a hand costs the same
however much the player has played.
"""

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from functools import lru_cache
from typing import Any, cast

from api.domain.hands.postings import HandAccounts
from api.domain.players.turn import UNFINISHED_HAND, ReadAfterLock, take_read
from api.errors import NotFound
from casino.rules import TableRules
from ledger.driver import Driver, Sql
from ledger.fresh import LockedChain

# SQLite reads it in a statement of its own; PostgreSQL by a function of the schema
# (migration `0011_opening_reads_after_lock`), which draws the new hand's id too, so that the
# hand's row needs no answer and goes with the next statement (`ledger.driver`): a round
# trip fewer. An id drawn for a hand then refused is skipped, as one drawn by an insert
# rolled back always was. Placing a hand runs that function in the statement that locks
# the player's row (`opening_after_lock`), a statement fewer again.
_OPENING_CALL = "hand_opening_after_lock(:player_id, :table_id, :wallet)"
# In the lock's statement the read takes the ledger's locks too, for a hand that can be
# dealt (migration `0014_opening_locks_the_chain`): its accounts, its chain's head, and
# an id for each transaction a placed hand posts, its stake and its settlement.
_OPENING_LOCKING_CALL = (
    "hand_opening_locking_chain("
    ":player_id, :table_id, :wallet, :held, :house, :chain, :ids, :stake)"
)
_IDS_A_PLACED_HAND_POSTS = 2
OPENING = Sql.each(
    f"""
    SELECT sp.id, sp.server_seed, sp.server_seed_hash, sp.client_seed, sp.next_nonce,
        ({UNFINISHED_HAND}),
        (SELECT t.is_open FROM casino_tables t WHERE t.id = :table_id),
        (SELECT a.balance FROM ledger_accounts a WHERE a.code = :wallet),
        NULL
    FROM seed_pairs sp
    WHERE sp.player_id = :player_id AND sp.revealed_at IS NULL
    """,
    f"SELECT {_OPENING_CALL}",
)

_TABLE_RULES = Sql.of("SELECT CAST(rules AS TEXT) FROM casino_tables WHERE id = :table_id")

_HAND_COLUMNS = """player_id, table_id, seed_pair_id, nonce, currency, rules, status,
        bet, tie_bet, raise_amount, player_card, dealer_card, outcome, total_staked,
        total_returned, net, balance_before, balance_after, created_at, settled_at,
        engine_version, rules_hash, placed_by_token"""
_HAND_VALUES = """:player_id, :table_id, :seed_pair_id, :nonce, :currency, :rules, :status,
        :bet, :tie_bet, 0, :player_card, :dealer_card, :outcome, :total_staked,
        :total_returned, :net, :balance_before, :balance_after, :created_at, :settled_at,
        :engine_version, :rules_hash, :placed_by_token"""
# SQLite runs both at once, the database giving the id; PostgreSQL, whose statements cost
# more than their work, sends both alongside the hand's next statement (`Driver.alongside`),
# with the id drawn by the opening read.
_INSERT_HAND = Sql.of(f"INSERT INTO hands ({_HAND_COLUMNS}) VALUES ({_HAND_VALUES}) RETURNING id")
_ADVANCE_NONCE = Sql.of(
    "UPDATE seed_pairs SET next_nonce = next_nonce + 1 WHERE id = :seed_pair_id"
)
_INSERT_DRAWN_HAND = Sql.of(f"INSERT INTO hands (id, {_HAND_COLUMNS}) VALUES (:id, {_HAND_VALUES})")

_DECIDING = Sql.of(
    """
    SELECT h.player_id, h.table_id, h.nonce, h.currency, CAST(h.rules AS TEXT),
        h.bet, h.tie_bet, h.decision, h.player_card, h.dealer_card, h.balance_before,
        h.created_at, sp.server_seed, sp.server_seed_hash, sp.client_seed, sp.revealed_at,
        h.engine_version, h.rules_hash
    FROM hands h JOIN seed_pairs sp ON sp.id = h.seed_pair_id
    WHERE h.id = :hand_id
    """
)

_HAND_PLAYER = Sql.of("SELECT player_id FROM hands WHERE id = :hand_id")

_SETTLE_HAND = Sql.of(
    """
    UPDATE hands SET decision = :decision, decided_by = :decided_by,
        decided_by_token = :decided_by_token,
        raise_amount = :raise_amount, total_staked = :total_staked,
        war_burned = :war_burned, war_player_card = :war_player_card,
        war_dealer_card = :war_dealer_card, status = :status, outcome = :outcome,
        total_returned = :total_returned, net = :net, balance_after = :balance_after,
        settled_at = :settled_at
    WHERE id = :hand_id
    """
)


@dataclass(frozen=True, slots=True)
class Opening:
    """What opening a hand checks and deals from, read in one statement."""

    pair_id: int
    server_seed: str = field(repr=False)  # a secret until the pair is revealed
    server_seed_hash: str
    client_seed: str
    nonce: int
    unfinished_hand: int | None
    table_open: bool | None
    wallet_balance: int
    drawn_hand_id: int | None
    """PostgreSQL: the id the hand will have; None on SQLite, whose insert gives it."""
    locked: LockedChain | None = None
    """PostgreSQL, read in the lock's statement, for a hand that can be dealt: the ledger's
    locks, taken, so that its postings need no answer (`ledger.fresh.LockedChain`)."""


def opening_after_lock(
    driver: Driver,
    player_id: int,
    table_id: int,
    accounts: HandAccounts | None,
    stake: int | None,
) -> ReadAfterLock | None:
    """PostgreSQL: `opening`'s read, to run in the statement that locks the player's row,
    with the ledger's locks of a hand that can be dealt, whose wallet covers `stake` (none
    for a table that does not exist, whose accounts are unknown, nor for a wager the table
    refuses: `stake` None)."""
    if not driver.is_postgresql:
        return None
    wallet = _wallet_code(accounts)
    key = _opening_read(player_id, table_id, wallet)
    if accounts is None or stake is None:
        return ReadAfterLock(key, _OPENING_CALL, {"table_id": table_id, "wallet": wallet})
    parameters = {
        "stake": stake,
        "table_id": table_id,
        "wallet": accounts.wallet.code,
        "held": accounts.held.code,
        "house": accounts.house.code,
        "chain": accounts.chain,
        "ids": _IDS_A_PLACED_HAND_POSTS,
    }
    return ReadAfterLock(key, _OPENING_LOCKING_CALL, parameters)


def _opening_read(player_id: int, table_id: int, wallet: str) -> tuple[str, int, int, str]:
    """Where the unit of work notes the opening read that the lock's statement ran."""
    return ("api.domain.hands.store.opening", player_id, table_id, wallet)


def _wallet_code(accounts: HandAccounts | None) -> str:
    """The wallet the hand is read against: none (`""`) for a table that does not exist."""
    return accounts.wallet.code if accounts is not None else ""


def opening(
    driver: Driver, player_id: int, table_id: int, accounts: HandAccounts | None
) -> Opening:
    """The player's active seed pair, unfinished hand, the table's state and the wallet:
    as the statement that locked the player's row read them (with the ledger's locks, where
    it took them), else read now."""
    wallet = _wallet_code(accounts)
    was_read, answer = take_read(driver, _opening_read(player_id, table_id, wallet))
    read = _from_json(answer) if was_read else _read_opening(driver, player_id, table_id, wallet)
    if read is None:  # every player has an active pair from creation on
        raise NotFound("seed pair")
    (pair_id, server_seed, seed_hash, client_seed, nonce) = read[:5]
    (unfinished, table_open, wallet_balance, drawn_hand_id) = read[5:9]
    return Opening(
        pair_id,
        server_seed,
        seed_hash,
        client_seed,
        nonce,
        unfinished,
        None if table_open is None else bool(table_open),
        int(wallet_balance or 0),
        drawn_hand_id,
        _locked(read, accounts),
    )


def _locked(read: Sequence[Any], accounts: HandAccounts | None) -> LockedChain | None:
    """The ledger's locks, where `hand_opening_locking_chain` took them after its read."""
    if len(read) < 10 or accounts is None:
        return None
    return LockedChain.read(read[9])


def _read_opening(
    driver: Driver, player_id: int, table_id: int, wallet: str
) -> Sequence[Any] | None:
    row = driver.first(OPENING, {"player_id": player_id, "table_id": table_id, "wallet": wallet})
    if row is None or not driver.is_postgresql:
        return row
    return _from_json(row[0])


def _from_json(answer: str | None) -> Sequence[Any] | None:
    """The row that PostgreSQL's function gives as one JSON array."""
    return None if answer is None else cast(Sequence[Any], json.loads(answer))


def table_rules(driver: Driver, table_id: int) -> TableRules | None:
    text = driver.scalar(_TABLE_RULES, {"table_id": table_id})
    return None if text is None else _rules(text)


def insert_hand(driver: Driver, values: dict[str, Any], drawn_id: int | None) -> int:
    """The hand's row written and its seed pair's nonce moved past it; the hand's id.
    Under `drawn_id` where `opening` drew one (PostgreSQL), in two writes that need no
    answer and that nothing after them in the unit of work reads, alongside its next
    statement; else (SQLite) the database gives it."""
    stored = values | {
        "rules": driver.json(values["rules"]),
        "created_at": driver.time(values["created_at"]),
        "settled_at": _time_or_none(driver, values["settled_at"]),
    }
    advance = {"seed_pair_id": values["seed_pair_id"]}
    if drawn_id is not None:
        driver.alongside(_INSERT_DRAWN_HAND, stored | {"id": drawn_id})
        driver.alongside(_ADVANCE_NONCE, advance)
        return drawn_id
    row = driver.first(_INSERT_HAND, stored)
    assert row is not None
    driver.execute(_ADVANCE_NONCE, advance)
    return int(row[0])


@dataclass(frozen=True, slots=True)
class Deciding:
    """A hand and its seeds, as a decision needs them."""

    player_id: int
    table_id: int
    nonce: int
    currency: str
    rules: TableRules
    bet: int
    tie_bet: int
    decision: str | None
    player_card: str
    dealer_card: str
    balance_before: int
    created_at: datetime
    server_seed: str = field(repr=False)  # a secret until the pair is revealed
    server_seed_hash: str
    client_seed: str
    revealed: bool
    engine_version: str | None
    rules_hash: str | None


def hand_player(driver: Driver, hand_id: int) -> int | None:
    row = driver.first(_HAND_PLAYER, {"hand_id": hand_id})
    return None if row is None else int(row[0])


def deciding(driver: Driver, hand_id: int) -> Deciding | None:
    row = driver.first(_DECIDING, {"hand_id": hand_id})
    if row is None:
        return None
    (player_id, table_id, nonce, currency, rules, bet, tie_bet, decision) = row[:8]
    (player_card, dealer_card, balance_before, created_at) = row[8:12]
    (server_seed, seed_hash, client_seed, revealed_at, engine_version, hashed) = row[12:]
    return Deciding(
        player_id,
        table_id,
        nonce,
        currency,
        _rules(rules),
        bet,
        tie_bet,
        decision,
        player_card,
        dealer_card,
        balance_before,
        driver.read_time(created_at),
        server_seed,
        seed_hash,
        client_seed,
        revealed_at is not None,
        engine_version,
        hashed,
    )


def settle_hand(driver: Driver, hand_id: int, values: dict[str, Any]) -> None:
    burned = values["war_burned"]
    driver.execute(
        _SETTLE_HAND,
        values
        | {
            "hand_id": hand_id,
            # A surrender's stays SQL NULL, as it was before the decision.
            "war_burned": None if burned is None else driver.json(burned),
            "settled_at": _time_or_none(driver, values["settled_at"]),
        },
    )


@lru_cache(maxsize=256)
def _rules(text: str) -> TableRules:
    """Rules as stored (a table's, or those recorded with a hand), parsed once per distinct
    rule set: a table's hands all share one."""
    return TableRules.from_dict(json.loads(text))


def _time_or_none(driver: Driver, moment: datetime | None) -> Any:
    return None if moment is None else driver.time(moment)
