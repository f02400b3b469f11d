"""Metadata is stored and hashed as its canonical JSON reads back, whichever way it is
worked out, and a hash is of the canonical JSON's bytes, whichever encoder writes them: the
hash chain's bytes must not depend on either."""

import hashlib
import json
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ledger.chain import canonical_json, request_fingerprint, stored_metadata, transaction_hash
from ledger.errors import InvalidTransaction

_SCALARS = st.none() | st.booleans() | st.integers() | st.text()
_JSON = st.recursive(
    _SCALARS | st.floats(allow_nan=False, allow_infinity=False),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
    max_leaves=8,
)


_FLAT = st.dictionaries(st.text(), _SCALARS, max_size=6)
_ANY_METADATA = _FLAT | st.dictionaries(st.text(), _JSON, max_size=4)
_AMOUNTS = st.integers()


def _reference_digest(document: dict[str, Any]) -> str:
    """The hash as the chain's first version wrote it: `json.dumps`, sorted and compact."""
    return hashlib.sha256(canonical_json(document).encode()).hexdigest()


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


@given(_FLAT)
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


@given(
    seq=st.integers(min_value=1),
    kind=st.text(),
    reference=st.none() | st.text(),
    key=st.text(),
    metadata=_ANY_METADATA,
    posted_at=st.datetimes(timezones=st.just(UTC)),
    entries=st.lists(st.tuples(st.text(), st.text(), _AMOUNTS), max_size=5),
    prev_hash=st.text(),
)
def test_a_transaction_hash_is_of_the_canonical_json_whichever_encoder_writes_it(
    seq: int,
    kind: str,
    reference: str | None,
    key: str,
    metadata: dict[str, Any],
    posted_at: datetime,
    entries: list[tuple[str, str, int]],
    prev_hash: str,
) -> None:
    document = {
        "seq": seq,
        "kind": kind,
        "reference": reference,
        "idempotency_key": key,
        "metadata": metadata,
        "posted_at": posted_at.isoformat(timespec="microseconds"),
        "entries": sorted([account, currency, amount] for account, currency, amount in entries),
        "prev_hash": prev_hash,
    }
    hashed = transaction_hash(
        seq=seq,
        kind=kind,
        reference=reference,
        idempotency_key=key,
        metadata=metadata,
        posted_at=posted_at,
        entries=entries,
        prev_hash=prev_hash,
    )
    assert hashed == _reference_digest(document)


@given(
    kind=st.text(),
    reference=st.none() | st.text(),
    metadata=_ANY_METADATA,
    legs=st.lists(st.tuples(st.text(), _AMOUNTS), max_size=5),
)
def test_a_request_fingerprint_is_of_the_canonical_json_whichever_encoder_writes_it(
    kind: str, reference: str | None, metadata: dict[str, Any], legs: list[tuple[str, int]]
) -> None:
    document = {
        "kind": kind,
        "reference": reference,
        "metadata": metadata,
        "legs": [[account, amount] for account, amount in legs],
    }
    fingerprint = request_fingerprint(kind=kind, reference=reference, metadata=metadata, legs=legs)
    assert fingerprint == _reference_digest(document)


def test_a_hash_of_metadata_that_is_not_plain_json_is_refused() -> None:
    with pytest.raises(InvalidTransaction):
        request_fingerprint(kind="k", reference=None, metadata={"at": object()}, legs=[])


def _characters() -> list[str]:
    """Every code point but the surrogates (which UTF-8 cannot write), in runs of 4,096."""
    every = [chr(point) for point in range(0x110000) if not 0xD800 <= point <= 0xDFFF]
    return ["".join(every[start : start + 4096]) for start in range(0, len(every), 4096)]


def test_every_character_is_hashed_as_the_canonical_json_writes_it() -> None:
    # keys on both sides of U+FFFF and U+10000, where UTF-16 and code point order differ
    keys = {"\uffff": 1, "\U00010000": 2, "\ue000": 3, "a": 4, "a\x00": 5, "\x7f": 6}
    for text in _characters():
        metadata = {**keys, text: text}
        document = {"kind": text, "reference": text, "metadata": metadata, "legs": [[text, 1]]}
        fingerprint = request_fingerprint(
            kind=text, reference=text, metadata=metadata, legs=[(text, 1)]
        )
        assert fingerprint == _reference_digest(document)


class _Text(str):
    """A `str` subclass, which msgspec refuses to write and `json.dumps` writes as its text."""


def test_a_kind_given_as_a_str_subclass_is_hashed_as_its_text() -> None:
    assert request_fingerprint(
        kind=_Text("hand.settle"), reference=None, metadata={}, legs=[("a", 1)]
    ) == request_fingerprint(kind="hand.settle", reference=None, metadata={}, legs=[("a", 1)])


def test_a_hash_of_an_amount_that_is_not_an_integer_is_refused() -> None:
    legs: Any = [("a", Decimal(5))]
    with pytest.raises(InvalidTransaction):
        request_fingerprint(kind="k", reference=None, metadata={}, legs=legs)
