"""The ledger read hand by hand: the batch reads the audit and the payout report share."""

from sqlalchemy import select

from api.db.database import Database
from api.services.audit import read_snapshot
from api.services.hand_ledger import AccountCodes, driver_rows, fetch_hand_ledger, reference
from ledger.schema import entries, transactions
from tests.audit.support import new_player, play_settled


def test_driver_rows_are_plain_tuples_with_the_values_sqlalchemy_reads(
    database: Database,
) -> None:
    play_settled(database, new_player(database))
    query = (
        select(
            entries.c.transaction_id, entries.c.account_id, entries.c.amount, transactions.c.kind
        )
        .join(transactions, transactions.c.id == entries.c.transaction_id)
        .order_by(entries.c.id)
    )
    with read_snapshot(database.engine) as connection:
        plain = driver_rows(connection, query)
        through_sqlalchemy = [tuple(row) for row in connection.execute(query)]
    assert plain == through_sqlalchemy
    assert all(type(row) is tuple for row in plain)


def test_a_settled_hand_reads_as_its_stake_and_settlement_netted_per_account(
    database: Database,
) -> None:
    player = new_player(database)
    hand = play_settled(database, player, bet=1000, action="surrender")  # no raise
    with read_snapshot(database.engine) as connection:
        ledger = fetch_hand_ledger(
            connection, [reference(hand.id)], AccountCodes(connection), details=True
        )
    stake, settlement = ledger[reference(hand.id)]
    assert (stake.kind, settlement.kind) == ("stake", "settlement")
    assert stake.amounts == {f"wallet:{player}:USD": 1000, f"held:{player}:USD": -1000}
    assert sum(settlement.amounts.values()) == 0
    assert stake.meta is not None and stake.meta["player_id"] == player
    assert stake.posted_at is not None and stake.posted_at.tzinfo is not None
