"""Canonical encodings and hashes: the hash chain and idempotency fingerprints."""

from __future__ import annotations

import hashlib
import itertools
import json
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import Any, Final

import msgspec

from ledger.errors import InvalidTransaction


def canonical_json(value: Any) -> str:
    """Sorted keys, no whitespace, no NaN: one byte string per value, on every machine."""
    try:
        return json.dumps(
            value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
        )
    except (TypeError, ValueError) as error:
        raise InvalidTransaction(f"not plain JSON: {error}") from error


_INT64_MIN: Final = -(2**63)
_INT64_MAX: Final = 2**63 - 1
_SORTED_JSON: Final = msgspec.json.Encoder(order="sorted")


def stored_metadata(metadata: Mapping[str, Any]) -> dict[str, Any]:
    """Metadata as the ledger stores and hashes it: what its canonical JSON reads back as.

    A flat mapping of `str` keys to `str`, `bool`, None or 64-bit `int` values, which is
    what every posting on a request path carries, reads back as itself with its keys
    sorted, so it is copied that way instead of being written and read again (two of a
    transaction's four JSON passes); any other takes the round trip, which also refuses
    what is not plain JSON (an integer too long to write, say).
    """
    if is_flat_and_plain(metadata):
        return dict(sorted(metadata.items()))
    normalised: dict[str, Any] = json.loads(canonical_json(dict(metadata)))
    return normalised


def is_flat_and_plain(metadata: Mapping[str, Any]) -> bool:
    """Whether `metadata` maps `str` keys to plain values (`_are_plain`): what msgspec
    writes as `canonical_json` (`json.dumps` without its ASCII escapes) does."""
    return all(type(key) is str for key in metadata) and _are_plain(metadata.values())


def _are_plain(values: Iterable[Any]) -> bool:
    """Whether every value is a `str`, `bool`, None or 64-bit `int`. One loop with no call
    a value: it runs over every value of the four hashes a hand makes (a call a value and
    three generators cost 0.5% of a hand's instructions: docs/performance-log.md)."""
    for value in values:
        kind = type(value)
        if kind is int:
            if not _INT64_MIN <= value <= _INT64_MAX:
                return False
        elif kind is not str and kind is not bool and value is not None:
            return False
    return True


def _digest(document: dict[str, Any], *, plain: bool) -> str:
    """SHA-256 of the document's canonical JSON.

    A `plain` document, every value of it a `str`, `bool`, None or 64-bit `int` (its
    metadata flat), is what every hash on a request path is of. For it msgspec writes the
    bytes `canonical_json` writes (the same escapes, keys in code point order, integers as
    digits; `tests/ledger/test_ledger_chain_encoding.py`) in about a tenth of the time,
    and a hand makes four of these hashes. Anything else (a float, a nested value, a
    `Decimal` amount, a `str` subclass) is written by `canonical_json` itself, which also
    refuses what is not plain JSON.
    """
    encoded = _SORTED_JSON.encode(document) if plain else canonical_json(document).encode()
    return hashlib.sha256(encoded).hexdigest()


def iso_utc(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat(timespec="microseconds")


def transaction_hash(
    *,
    seq: int,
    kind: str,
    reference: str | None,
    idempotency_key: str,
    metadata: Mapping[str, Any],
    posted_at: datetime,
    entries: Iterable[tuple[str, str, int]],
    prev_hash: str,
) -> str:
    """SHA-256 of a transaction's content and its predecessor's hash.

    Entries are (account code, currency, signed amount), sorted so that the order rows
    come back from the database cannot change the hash.
    """
    rows = sorted([account, currency, amount] for account, currency, amount in entries)
    document = {
        "seq": seq,
        "kind": kind,
        "reference": reference,
        "idempotency_key": idempotency_key,
        "metadata": dict(metadata),
        "posted_at": iso_utc(posted_at),
        "entries": rows,
        "prev_hash": prev_hash,
    }
    plain = (
        _are_plain((seq, kind, reference, idempotency_key, prev_hash))
        and _are_plain(itertools.chain.from_iterable(rows))
        and is_flat_and_plain(metadata)
    )
    return _digest(document, plain=plain)


def request_fingerprint(
    *,
    kind: str,
    reference: str | None,
    metadata: Mapping[str, Any],
    legs: Iterable[tuple[str, int]],
) -> str:
    """What must match for an idempotent replay: everything but the key and the clock."""
    pairs = [[account, amount] for account, amount in legs]
    document = {
        "kind": kind,
        "reference": reference,
        "metadata": dict(metadata),
        "legs": pairs,
    }
    plain = (
        _are_plain((kind, reference))
        and _are_plain(itertools.chain.from_iterable(pairs))
        and is_flat_and_plain(metadata)
    )
    return _digest(document, plain=plain)
