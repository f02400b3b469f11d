"""Opaque keyset cursors: stable under concurrent inserts, unlike offsets."""

import base64
import binascii
from dataclasses import dataclass
from typing import Generic, TypeVar

from api.errors import InvalidInput

DEFAULT_LIMIT = 50
MAX_LIMIT = 200

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Page(Generic[T]):
    """One page of a listing, newest or oldest first as the listing says."""

    items: tuple[T, ...]
    next_cursor: str | None


def encode_cursor(last_id: int) -> str:
    return base64.urlsafe_b64encode(f"id:{last_id}".encode()).decode().rstrip("=")


def decode_cursor(cursor: str | None) -> int | None:
    """The id after which the next page starts, or None for the first page."""
    if cursor is None:
        return None
    try:
        text = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
        prefix, _, value = text.partition(":")
        if prefix != "id" or not value.isdigit():
            raise ValueError(text)
        return int(value)
    except (ValueError, binascii.Error, UnicodeDecodeError):
        raise InvalidInput("cursor", "is not a cursor this service issued") from None


def next_cursor(ids: list[int], limit: int) -> str | None:
    """A cursor when the page is full (there may be more), else None."""
    return encode_cursor(ids[-1]) if len(ids) == limit and ids else None
