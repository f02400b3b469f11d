"""A request's fingerprint is the SHA-256 of the bytes `json.dumps` writes of it (sorted,
compact, ASCII), whichever encoder writes them: every key ever recorded was fingerprinted
so, and a retry must match its first request across versions."""

import hashlib
import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from api.http.idempotency import fingerprint

_PLAIN = st.none() | st.booleans() | st.integers() | st.text()
_ANY_JSON = st.recursive(
    _PLAIN | st.floats(allow_nan=False, allow_infinity=False),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
    max_leaves=8,
)


def _reference(method: str, path: str, body: Any) -> str:
    canonical = json.dumps([method, path, body], sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()


@given(st.text(), st.text(), st.dictionaries(st.text(), _PLAIN))
def test_a_flat_body_of_plain_values_is_fingerprinted_as_json_dumps_writes_it(
    method: str, path: str, body: dict[str, Any]
) -> None:
    assert fingerprint(method, path, body) == _reference(method, path, body)


_ASCII = st.text(st.characters(max_codepoint=0x7F))  # controls and DEL included
_PLAIN_ASCII = st.none() | st.booleans() | st.integers() | _ASCII


@given(_ASCII, _ASCII, st.dictionaries(_ASCII, _PLAIN_ASCII))
def test_an_ascii_request_is_fingerprinted_as_json_dumps_writes_it(
    method: str, path: str, body: dict[str, Any]
) -> None:
    assert fingerprint(method, path, body) == _reference(method, path, body)


@given(_ANY_JSON)
def test_any_json_body_is_fingerprinted_as_json_dumps_writes_it(body: Any) -> None:
    assert fingerprint("POST", "/v1/hands", body) == _reference("POST", "/v1/hands", body)


def test_every_character_is_fingerprinted_as_json_dumps_writes_it() -> None:
    for code_point in [*range(0x100), 0x2028, 0xD800, 0xFFFF, 0x1F0A1]:
        body = {"client_seed": chr(code_point)}
        assert fingerprint("PUT", "/v1/seeds", body) == _reference("PUT", "/v1/seeds", body)
