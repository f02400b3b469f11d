"""Free War games (player): deal one, play it a turn at a time, read it with its log."""

from litestar import Controller, get
from litestar.params import JSONBody
from litestar.response import Response

from api.domain.tokens.service import Role
from api.domain.war_games import service as war_games
from api.domain.war_games.schemas import (
    WarGameAuditView,
    WarGameCreate,
    WarGameView,
    WarTurnPlay,
    WarTurnResult,
)
from api.http.routing import (
    BEARER,
    CommandDependency,
    DatabaseDependency,
    PathId,
    PrincipalDependency,
    command,
    problems,
)


class WarGameController(Controller):
    path = "/v1/war-games"
    tags = ("war games",)
    security = BEARER

    @command("/", 403)
    async def create_war_game(
        self,
        data: JSONBody[WarGameCreate],
        principal: PrincipalDependency,
        command: CommandDependency,
    ) -> Response[WarGameView]:
        """Deal a game of the War family; the answer carries the seed commitment. No money
        moves."""
        player_id = principal.own_player_id()
        seats = [seat.policy for seat in data.seats] if data.seats is not None else None
        return await command.run(
            data,
            lambda s: WarGameView.model_validate(
                war_games.create_game(
                    s, player_id, data.variant, data.players, seats, dict(data.options),
                    data.client_seed, principal.token_id,
                )
            ),
        )  # fmt: skip

    @command("/{game_id:int}/turns", 403, 404, 409)
    async def play_war_turn(
        self,
        game_id: PathId,
        data: JSONBody[WarTurnPlay],
        principal: PrincipalDependency,
        command: CommandDependency,
    ) -> Response[WarTurnResult]:
        """Play the next turn with the human seats' choices: the cards and the new state;
        the server seed once the game has ended."""
        player_id = principal.own_player_id()
        sort = None if data.sort is None else data.sort.value
        given = {"choices": dict(data.choices), "sort": sort}
        return await command.run(
            data,
            lambda s: WarTurnResult.model_validate(
                war_games.play_game_turn(s, player_id, game_id, given, principal.token_id)
            ),
        )

    @get("/{game_id:int}", sync_to_thread=True, responses=problems(403, 404))
    def get_war_game(
        self, game_id: PathId, database: DatabaseDependency, principal: PrincipalDependency
    ) -> WarGameView:
        """The game with its log: every turn's input and what it dealt."""
        player_id = principal.own_player_id()
        with database.reading() as session:
            return WarGameView.model_validate(war_games.game_view(session, player_id, game_id))


class WarGameAuditController(Controller):
    path = "/v1/audit/war-games"
    tags = ("audit",)
    security = BEARER

    @get("/{game_id:int}", sync_to_thread=True, responses=problems(403, 404))
    def audit_war_game(
        self, game_id: PathId, database: DatabaseDependency, principal: PrincipalDependency
    ) -> WarGameAuditView:
        """Replay a War game from its seeds and stored inputs; compare every stored turn."""
        principal.require(Role.AUDITOR)
        with database.reading() as session:
            return WarGameAuditView.model_validate(war_games.audit_game(session, game_id))
