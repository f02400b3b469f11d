"""A player's actions, one at a time.

Every unit of work that moves a player's money or changes their game first locks the
player's row, so that a player's requests serialise (on SQLite, BEGIN IMMEDIATE already
serialises every writer). The lock order everywhere is: player row, then the ledger
accounts, then the ledger's chain head. No two requests can deadlock on the accounts: a
player's own accounts are only moved under the player's lock, and each unit of work moves
at most one shared account (its chain's house or cashier), whatever order one UPDATE of
several balances takes their row locks in. The one exception, the back office's
resolution of abandoned hands (`hands.unfinished.resolve_overdue`), locks every player it
resolves first, and then, hand after hand, one chain's house account and head while it
holds another's, as it did before the ledger's locks moved into the opening reads: a
request it waits for holds one chain's at most, and two resolutions at once find the same
overdue hands and lock their players, in id order, before any account.
"""

from collections.abc import Hashable, Mapping
from typing import Any, NamedTuple

from sqlalchemy.orm import Session

from api.errors import Conflict, NotFound
from casino.hand import HandStatus
from ledger.driver import Driver, Sql, driver_of

# The status is written into the statement, so that SQLite uses the partial index of hands
# awaiting a decision, whatever the player's history.
PLAYER_LOCK = "SELECT protected FROM players WHERE id = :player_id{for_update}"
"""The player's row locked (PostgreSQL), and whether it has protections: to run or to nest."""
_LOCK_PLAYER = Sql.of(PLAYER_LOCK)
_HELD = "api.domain.players.turn.held"
UNFINISHED_HAND = (
    "SELECT h.id FROM hands h WHERE h.player_id = :player_id "
    f"AND h.status = '{HandStatus.AWAITING_DECISION.value}'"
)
"""The player's hand awaiting a decision, if any: a statement to run or to nest."""
_UNFINISHED_HAND = Sql.of(UNFINISHED_HAND)


def lock_player(session: Session, player_id: int) -> None:
    lock_player_on(driver_of(session), player_id)


def lock_player_on(driver: Driver, player_id: int) -> bool:
    """Check that the player exists and, on PostgreSQL, lock the row for the rest of the
    transaction. What the unit of work reads next, it reads in later statements: under
    READ COMMITTED those see everything the previous holder of the lock committed.

    Returns whether the player has protections (limits, exclusions) to check. A statement
    of this unit of work may have locked the row already (`note_locked`)."""
    if (_HELD, player_id) in driver.known:
        protected = driver.known[_HELD, player_id]
    else:
        row = driver.first(_LOCK_PLAYER, {"player_id": player_id})
        protected = None if row is None else bool(row[0])
    if protected is None:
        raise NotFound("player")
    return bool(protected)


def note_locked(driver: Driver, player_id: int, protected: bool | None) -> None:
    """Note that a statement of this unit of work ran `PLAYER_LOCK` for the player and read
    `protected` (NULL: there is no such player), so that `lock_player_on` need not."""
    driver.known[_HELD, player_id] = None if protected is None else bool(protected)


class ReadAfterLock(NamedTuple):
    """A command's opening read, to run in the statement that locks its player's row
    (PostgreSQL, `api.http.idempotency.PlayersTurn`): a statement and a round trip fewer.

    `call` is a call of a VOLATILE function of the schema, written with `:name` parameters
    (`:player_id` is the turn's): such a function takes a snapshot of its own for each query
    it runs, and the statement calls it only once the row is held, so it reads whatever the
    row lock's previous holder committed, as a statement after the lock would. Its answer is
    noted under `key` (`note_read`) for the command to take (`take_read`)."""

    key: Hashable
    call: str
    parameters: Mapping[str, Any]


_NOT_READ = object()


def note_read(driver: Driver, read: ReadAfterLock, answer: Any) -> None:
    """Note the answer of `read`, which a statement of this unit of work ran."""
    driver.known[read.key] = answer


def take_read(driver: Driver, key: Hashable) -> tuple[bool, Any]:
    """Whether a statement of this unit of work ran the read noted under `key`, and its
    answer: taken, so that a second look reads afresh."""
    answer = driver.known.pop(key, _NOT_READ)
    return (False, None) if answer is _NOT_READ else (True, answer)


def refuse_if_unfinished(session: Session, player_id: int) -> None:
    """One hand at a time: a tie awaiting its decision blocks new hands and seed rotation."""
    found = driver_of(session).scalar(_UNFINISHED_HAND, {"player_id": player_id})
    refuse_unfinished(found)


def refuse_unfinished(unfinished_hand: int | None) -> None:
    if unfinished_hand is not None:
        raise Conflict(
            "unfinished_hand", f"hand {unfinished_hand} awaits a decision; decide it first"
        )
