"""The ledger read hand by hand: the batch reads the audit and the payout report share."""

from typing import Any

from sqlalchemy import Select, String, cast, select, type_coerce
from sqlalchemy.types import NullType

from api.db.database import Database
from api.db.snapshot import read_snapshot
from api.domain.hands.ledger import AccountCodes, driver_rows, fetch_hand_ledger, reference
from ledger import chart
from ledger.chains import chain_for
from ledger.schema import entries, transactions
from tests.audit.support import decide, new_player, play_settled, play_tie


def _ledger_columns_query() -> Select[Any]:
    """Every kind of column the batch reads take: integers, text, JSON read as text, raw
    times."""
    return (
        select(
            transactions.c.id,
            transactions.c.kind,
            cast(transactions.c["metadata"], String),
            type_coerce(transactions.c.posted_at, NullType()),
            entries.c.account_id,
            entries.c.amount,
        )
        .join(entries, entries.c.transaction_id == transactions.c.id)
        .order_by(entries.c.id)
    )


def test_driver_rows_are_plain_tuples_with_the_values_sqlalchemy_reads(
    database: Database,
) -> None:
    play_settled(database, new_player(database))
    with read_snapshot(database.engine) as connection:
        plain = driver_rows(connection, _ledger_columns_query())
        through_sqlalchemy = [tuple(row) for row in connection.execute(_ledger_columns_query())]
    assert plain == through_sqlalchemy
    assert all(type(row) is tuple for row in plain)


def test_driver_rows_on_a_streaming_connection_miss_no_row(database: Database) -> None:
    play_settled(database, new_player(database))
    with read_snapshot(database.engine) as connection:
        expected = [tuple(row) for row in connection.execute(_ledger_columns_query())]
        streaming = connection.execution_options(stream_results=True)
        assert driver_rows(streaming, _ledger_columns_query()) == expected


def _surrendered_hand_ledger(database: Database) -> tuple[int, Any]:
    """A tie of 1,000 surrendered: a stake, then a settlement returning half the bet."""
    player = new_player(database)
    hand = decide(database, play_tie(database, player, bet=1000).id, player, "surrender")
    with read_snapshot(database.engine) as connection:
        ledger = fetch_hand_ledger(
            connection, [reference(hand.id)], AccountCodes(connection), details=True
        )
    return player, ledger[reference(hand.id)]


def test_a_settled_hand_reads_as_its_stake_and_settlement_netted_per_account(
    database: Database,
) -> None:
    player, (stake, settlement) = _surrendered_hand_ledger(database)
    wallet, held = chart.wallet(str(player), "USD").code, chart.held(str(player), "USD").code
    house = chart.house("USD", chain_for(str(player))).code
    assert (stake.kind, stake.amounts) == ("stake", {wallet: 1000, held: -1000})
    assert (settlement.kind, settlement.amounts) == (
        "settlement",
        {held: 1000, house: -500, wallet: -500},
    )


def test_with_details_each_transaction_carries_its_metadata_and_aware_posting_time(
    database: Database,
) -> None:
    player, txns = _surrendered_hand_ledger(database)
    for txn in txns:
        assert txn.meta is not None and txn.meta["player_id"] == player
        assert txn.posted_at is not None and txn.posted_at.tzinfo is not None
