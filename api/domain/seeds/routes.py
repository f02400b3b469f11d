"""Fairness seeds: the commitment before play, rotation, the revealed pairs."""

from typing import Any

from litestar import Controller, Request, get
from litestar.params import JSONBody
from litestar.response import Response

from api.domain.seeds import service as seeds
from api.domain.seeds.schemas import RevealedSeedPage, RotateSeeds, SeedRotation, SeedState
from api.domain.tokens.service import Role
from api.http.routing import (
    BEARER,
    Cursor,
    DatabaseDependency,
    IdempotencyKey,
    Limit,
    PrincipalDependency,
    command,
    problems,
    run_idempotent,
)


def _player_id(principal: PrincipalDependency) -> int:
    principal.require(Role.PLAYER)
    assert principal.player_id is not None
    return principal.player_id


class SeedController(Controller):
    path = "/v1/me/seeds"
    tags = ("fairness",)
    security = BEARER

    @get("/", sync_to_thread=True, responses=problems(403))
    def current(self, database: DatabaseDependency, principal: PrincipalDependency) -> SeedState:
        """The commitment (hash) to the server seed the next hand will use."""
        player_id = _player_id(principal)
        with database.reading() as session:
            return seeds.current_state(session, player_id)

    @command("/rotate", 403, 409, status_code=200)
    def rotate(
        self,
        request: Request[Any, Any, Any],
        principal: PrincipalDependency,
        idempotency_key: IdempotencyKey,
        data: JSONBody[RotateSeeds | None] = None,
    ) -> Response[SeedRotation]:
        """Reveal the server seed in use and commit to a new one (the body may be empty)."""
        player_id = _player_id(principal)
        body = data or RotateSeeds()
        return run_idempotent(
            request,
            principal,
            idempotency_key,
            body,
            SeedRotation,
            lambda s: seeds.rotate(s, player_id, body.client_seed),
            status_code=200,
        )

    @get("/revealed", sync_to_thread=True, responses=problems(403))
    def revealed(
        self,
        database: DatabaseDependency,
        principal: PrincipalDependency,
        limit: Limit = 50,
        cursor: Cursor = None,
    ) -> RevealedSeedPage:
        """The player's revealed seed pairs, newest first: everything needed to re-derive."""
        player_id = _player_id(principal)
        with database.reading() as session:
            return seeds.revealed_pairs(session, player_id, cursor, limit)
