"""Players and their wallets."""

from litestar import Controller, get
from litestar.params import JSONBody
from litestar.response import Response

from api.domain.players import service as players
from api.domain.players.schemas import PlayerCreate, PlayerCreated, PlayerToken, PlayerView
from api.domain.tokens.service import Role
from api.errors import NotFound
from api.http.routing import (
    BEARER,
    CommandDependency,
    DatabaseDependency,
    PathId,
    PrincipalDependency,
    SettingsDependency,
    command,
    problems,
)


class PlayerController(Controller):
    tags = ("players",)
    security = BEARER

    @command("/v1/players", 403, 409)
    async def create_player(
        self,
        data: JSONBody[PlayerCreate],
        principal: PrincipalDependency,
        settings: SettingsDependency,
        command: CommandDependency,
    ) -> Response[PlayerCreated]:
        """Register a player; the response carries the player's token, shown only here."""
        principal.require(Role.OPERATOR)
        ttl = settings.player_token_ttl
        return await command.run(
            data,
            lambda s: PlayerCreated.model_validate(
                players.create_player(s, data.display_name, data.external_ref, principal, ttl)
            ),
        )

    @command("/v1/players/{player_id:int}/tokens", 403, 404, 409)
    async def issue_player_token(
        self,
        player_id: PathId,
        principal: PrincipalDependency,
        settings: SettingsDependency,
        command: CommandDependency,
    ) -> Response[PlayerToken]:
        """Issue another bearer token for a player; earlier tokens keep working. Recorded as
        a `token_issued` event naming the operator."""
        principal.require(Role.OPERATOR)
        ttl = settings.player_token_ttl
        return await command.run(
            None,
            lambda s: PlayerToken.model_validate(
                players.issue_player_token(s, player_id, principal, ttl)
            ),
        )

    @get("/v1/players/{player_id:int}", sync_to_thread=True, responses=problems(403, 404))
    def get_player(
        self,
        player_id: PathId,
        database: DatabaseDependency,
        principal: PrincipalDependency,
        settings: SettingsDependency,
    ) -> PlayerView:
        """A player's wallet: operators, auditors, or the player themself."""
        if not principal.may_see_player(player_id):
            raise NotFound("player")
        with database.reading() as session:
            return PlayerView.model_validate(players.wallet(session, player_id, settings.currency))

    @get("/v1/me", sync_to_thread=True, responses=problems(403))
    def get_my_wallet(
        self,
        database: DatabaseDependency,
        principal: PrincipalDependency,
        settings: SettingsDependency,
    ) -> PlayerView:
        """The calling player's own wallet."""
        player_id = principal.own_player_id()
        with database.reading() as session:
            return PlayerView.model_validate(players.wallet(session, player_id, settings.currency))
