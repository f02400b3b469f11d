"""What a database never changes once written, remembered per database for the hot path.

A table's rules never change after creation, and an account's id, currency, side and limit
never change once it is opened (its balance does, and is always read). Reading them again
on every hand would cost a round trip each; they are remembered instead, per database (per
connection pool, which an engine and its variants share), so two databases served by one
process, as in the tests, never see each other's rows.
"""

from dataclasses import dataclass, field
from weakref import WeakKeyDictionary

from sqlalchemy.orm import Session
from sqlalchemy.pool import Pool

from casino.rules import TableRules
from ledger.fresh import AccountBook


@dataclass(slots=True)
class Memo:
    table_rules: dict[int, TableRules] = field(default_factory=dict)
    accounts: AccountBook = field(default_factory=AccountBook)
    currencies: set[str] = field(default_factory=set)


_MEMOS: WeakKeyDictionary[Pool, Memo] = WeakKeyDictionary()


def memo(session: Session) -> Memo:
    """The memo of the database `session` is bound to."""
    pool = session.get_bind().engine.pool
    found = _MEMOS.get(pool)
    if found is None:
        found = _MEMOS.setdefault(pool, Memo())
    return found
