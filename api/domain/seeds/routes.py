"""Fairness seeds: the commitment before play, rotation, the revealed pairs."""

from litestar import Controller, get
from litestar.params import JSONBody
from litestar.response import Response

from api.domain.seeds import service as seeds
from api.domain.seeds.schemas import RevealedSeedPage, RotateSeeds, SeedRotation, SeedState
from api.http.routing import (
    BEARER,
    CommandDependency,
    Cursor,
    DatabaseDependency,
    Limit,
    PrincipalDependency,
    command,
    problems,
)
from api.pagination import DEFAULT_LIMIT


class SeedController(Controller):
    path = "/v1/me/seeds"
    tags = ("fairness",)
    security = BEARER

    @get("/", sync_to_thread=True, responses=problems(403))
    def get_seed_commitment(
        self, database: DatabaseDependency, principal: PrincipalDependency
    ) -> SeedState:
        """The commitment (hash) to the server seed the next hand will use."""
        player_id = principal.own_player_id()
        with database.reading() as session:
            return SeedState.model_validate(seeds.current_commitment(session, player_id))

    @command("/rotate", 403, 409, status_code=200)
    async def rotate_seeds(
        self,
        principal: PrincipalDependency,
        command: CommandDependency,
        data: JSONBody[RotateSeeds | None] = None,
    ) -> Response[SeedRotation]:
        """Reveal the server seed in use and commit to a new one (the body may be empty)."""
        player_id = principal.own_player_id()
        body = data or RotateSeeds()
        return await command.run(
            body,
            lambda s: SeedRotation.model_validate(
                seeds.rotate(s, player_id, body.client_seed, principal)
            ),
        )

    @get("/revealed", sync_to_thread=True, responses=problems(403))
    def list_revealed_seeds(
        self,
        database: DatabaseDependency,
        principal: PrincipalDependency,
        limit: Limit = DEFAULT_LIMIT,
        cursor: Cursor = None,
    ) -> RevealedSeedPage:
        """The player's revealed seed pairs, newest first: everything needed to re-derive."""
        player_id = principal.own_player_id()
        with database.reading() as session:
            page = seeds.revealed_pairs(session, player_id, cursor, limit)
            return RevealedSeedPage.model_validate(page)
