"""Fairness seed pairs: request and response bodies."""

from datetime import datetime
from typing import Annotated

from pydantic import StringConstraints

from api.http.schemas import RequestBody, ResponseBody

ClientSeed = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9_-]{1,64}$")]


class SeedState(ResponseBody):
    server_seed_hash: str
    client_seed: str
    next_nonce: int


class RotateSeeds(RequestBody):
    client_seed: ClientSeed | None = None


class RevealedSeedPair(ResponseBody):
    server_seed: str
    server_seed_hash: str
    client_seed: str
    hands: int
    revealed_at: datetime | None = None


class SeedRotation(ResponseBody):
    revealed: RevealedSeedPair
    current: SeedState


class RevealedSeedPage(ResponseBody):
    items: list[RevealedSeedPair]
    next_cursor: str | None
