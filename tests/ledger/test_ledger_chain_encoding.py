"""Metadata is stored and hashed as its canonical JSON reads back, whichever way it is
worked out: the hash chain's bytes must not depend on it."""

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ledger.chain import canonical_json, stored_metadata
from ledger.errors import InvalidTransaction

_SCALARS = st.none() | st.booleans() | st.integers() | st.text()
_JSON = st.recursive(
    _SCALARS | st.floats(allow_nan=False, allow_infinity=False),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
    max_leaves=8,
)


def _read_back(metadata: dict[str, Any]) -> Any:
    read: Any = json.loads(canonical_json(metadata))
    return read


def _typed(value: Any) -> Any:
    """The value with every scalar's type beside it: True and 1 are equal, not the same."""
    if isinstance(value, dict):
        return [(key, _typed(item)) for key, item in value.items()]
    if isinstance(value, list):
        return [_typed(item) for item in value]
    return (type(value), value)


@given(st.dictionaries(st.text(), _SCALARS, max_size=6))
def test_flat_metadata_is_stored_as_its_canonical_json_reads_back(
    metadata: dict[str, Any],
) -> None:
    assert _typed(stored_metadata(metadata)) == _typed(_read_back(metadata))


@given(st.dictionaries(st.text(), _JSON, max_size=4))
def test_nested_metadata_is_stored_as_its_canonical_json_reads_back(
    metadata: dict[str, Any],
) -> None:
    assert _typed(stored_metadata(metadata)) == _typed(_read_back(metadata))


def test_a_tuple_is_stored_as_the_list_json_makes_of_it() -> None:
    assert stored_metadata({"cards": ("2H", "3C")}) == {"cards": ["2H", "3C"]}


def test_metadata_that_is_not_plain_json_is_refused() -> None:
    with pytest.raises(InvalidTransaction):
        stored_metadata({"at": object()})


def test_an_integer_too_long_to_write_is_refused() -> None:
    with pytest.raises(InvalidTransaction):
        stored_metadata({"amount": 10**5000})
