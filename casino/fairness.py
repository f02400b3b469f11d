"""The provably fair card source of fairness.md, implemented to the letter.

A hand's cards are a pure function of (server seed, client seed, nonce, shoe): the server
commits to the seed with its SHA-256 hash before play, and anyone can re-derive the cards
once the seed is revealed.
"""

import hashlib
import hmac
import re
import secrets
import struct
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from casino.errors import InvalidSeed

SERVER_SEED_BYTES: Final = 32
CLIENT_SEED_PATTERN: Final = re.compile(r"[A-Za-z0-9_-]{1,64}")
_U32_SPACE: Final = 2**32
_WORDS_PER_BLOCK: Final = struct.Struct(">8I")


def new_server_seed() -> str:
    """A fresh secret server seed, as 64 lowercase hex characters."""
    return secrets.token_bytes(SERVER_SEED_BYTES).hex()


def new_client_seed() -> str:
    """A random client seed for players who choose none (16 characters of the allowed set)."""
    return secrets.token_urlsafe(12)


def server_seed_bytes(server_seed: str) -> bytes:
    """The raw 32 bytes behind a hex server seed, refusing anything else."""
    if len(server_seed) != 2 * SERVER_SEED_BYTES or server_seed != server_seed.lower():
        raise InvalidSeed("server_seed", "must be 64 lowercase hex characters")
    try:
        return bytes.fromhex(server_seed)
    except ValueError:
        raise InvalidSeed("server_seed", "must be 64 lowercase hex characters") from None


def server_seed_hash(server_seed: str) -> str:
    """The commitment shown before play: SHA-256 over the raw bytes, not the hex text."""
    return hashlib.sha256(server_seed_bytes(server_seed)).hexdigest()


def validate_client_seed(client_seed: str) -> str:
    """Return `client_seed` if fairness.md allows it, else raise `InvalidSeed`."""
    if not CLIENT_SEED_PATTERN.fullmatch(client_seed):
        raise InvalidSeed("client_seed", "must be 1 to 64 characters of A-Z, a-z, 0-9, _ and -")
    return client_seed


@dataclass(frozen=True, slots=True)
class HandSeeds:
    """Everything that fixes one hand's shuffle: the seed pair and the hand's nonce."""

    server_seed: str
    client_seed: str
    nonce: int

    def __post_init__(self) -> None:
        server_seed_bytes(self.server_seed)
        validate_client_seed(self.client_seed)
        if self.nonce < 0:
            raise InvalidSeed("nonce", "must be zero or more")


class RandomStream:
    """The HMAC-SHA256 byte stream read as big-endian u32, with unbiased integers below n."""

    __slots__ = ("_buffer", "_client_seed", "_key", "_nonce", "_round", "consumed")

    def __init__(self, seeds: HandSeeds) -> None:
        self._key = bytes.fromhex(seeds.server_seed)
        self._client_seed = seeds.client_seed
        self._nonce = seeds.nonce
        self._round = 0
        self._buffer: list[int] = []
        self.consumed = 0

    @classmethod
    def resumed(cls, seeds: HandSeeds, consumed: int) -> "RandomStream":
        """The stream positioned after its first `consumed` integers, as if they had been read.

        A game played over many requests (War) keeps only this count between turns; the
        blocks before the position are skipped, not computed.
        """
        stream = cls(seeds)
        blocks, words = divmod(consumed, _WORDS_PER_BLOCK.size // 4)
        stream._round = blocks
        for _ in range(words):
            stream.next_u32()
        stream.consumed = consumed
        return stream

    def next_u32(self) -> int:
        if not self._buffer:
            message = f"{self._client_seed}:{self._nonce}:{self._round}".encode("ascii")
            block = hmac.digest(self._key, message, hashlib.sha256)
            self._buffer = list(reversed(_WORDS_PER_BLOCK.unpack(block)))
            self._round += 1
        self.consumed += 1
        return self._buffer.pop()

    def below(self, n: int) -> int:
        """Uniform integer in [0, n) by rejection: values at or above the limit are dropped."""
        if not 0 < n <= _U32_SPACE:
            raise ValueError(f"n must be in 1..2^32, got {n}")
        limit = (_U32_SPACE // n) * n
        while True:
            x = self.next_u32()
            if x < limit:
                return x % n


def draw_cards(seeds: HandSeeds, shoe: Sequence[str], count: int) -> tuple[str, ...]:
    """The first `count` cards of the seeded shuffle of `shoe` (lazy Fisher-Yates from the top).

    Only the drawn positions are shuffled, yet the result equals the top of a full shuffle, so
    a war re-derives the first deal's cards unchanged. The shoe is not copied: the few
    positions a swap has changed are kept in a dict (with the default rules a hand draws 2
    of 312 cards, a war 7).
    """
    if not 0 <= count <= len(shoe):
        raise ValueError(f"cannot draw {count} cards from a shoe of {len(shoe)}")
    stream = RandomStream(seeds)
    size = len(shoe)
    moved: dict[int, str] = {}  # position -> the card a swap put there, drawn or not yet
    drawn: list[str] = []
    for i in range(count):
        j = i + stream.below(size - i)
        drawn.append(moved.get(j, shoe[j]))
        moved[j] = moved.get(i, shoe[i])
    return tuple(drawn)
