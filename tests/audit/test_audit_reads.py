"""The audit's batches of hand rows are the driver's own tuples: the same values, of the
same types, as SQLAlchemy reads for one hand."""

from typing import Any

import pytest

from api.db.database import Database
from api.db.snapshot import read_snapshot
from api.domain.audit.reads import HandRow, batches, one_hand

pytestmark = pytest.mark.usefixtures("played")


def _typed(row: HandRow) -> list[tuple[Any, type]]:
    return [(value, type(value)) for value in row]


def _as_one_hand_reads_them(database: Database, rows: list[HandRow]) -> list[HandRow]:
    with read_snapshot(database.engine) as connection:
        found = [one_hand(connection, row.id) for row in rows]
    assert None not in found
    return [row for row in found if row is not None]


def test_batched_hand_rows_equal_the_single_hand_read_value_for_value(
    database: Database,
) -> None:
    with read_snapshot(database.engine) as connection:
        rows = [row for batch in batches(connection, None, None, 7) for row in batch]

    assert rows
    assert list(map(_typed, rows)) == list(map(_typed, _as_one_hand_reads_them(database, rows)))


def test_batched_hand_rows_are_the_same_on_a_streaming_connection(database: Database) -> None:
    with read_snapshot(database.engine) as connection:
        plain = [row for batch in batches(connection, None, None, 7) for row in batch]
        streaming = connection.execution_options(stream_results=True)
        streamed = [row for batch in batches(streaming, None, None, 7) for row in batch]

    assert list(map(_typed, streamed)) == list(map(_typed, plain))
