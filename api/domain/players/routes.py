"""Players, wallets and the cashier."""

from typing import Any

from litestar import Controller, Request, get
from litestar.params import JSONBody
from litestar.response import Response

from api.domain.players import service as players
from api.domain.players.schemas import PlayerCreate, PlayerCreated, PlayerToken, PlayerView
from api.domain.tokens.service import Role
from api.errors import NotFound
from api.http.routing import (
    BEARER,
    DatabaseDependency,
    IdempotencyKey,
    PathId,
    PrincipalDependency,
    SettingsDependency,
    command,
    problems,
    run_idempotent,
)


class PlayerController(Controller):
    tags = ("players",)
    security = BEARER

    @command("/v1/players", 403, 409)
    def create_player(
        self,
        request: Request[Any, Any, Any],
        data: JSONBody[PlayerCreate],
        principal: PrincipalDependency,
        idempotency_key: IdempotencyKey,
    ) -> Response[PlayerCreated]:
        """Register a player; the response carries the player's token, shown only here."""
        principal.require(Role.OPERATOR)
        return run_idempotent(
            request,
            principal,
            idempotency_key,
            data,
            PlayerCreated,
            lambda s: players.create_player(s, data.display_name, data.external_ref),
            status_code=201,
        )

    @command("/v1/players/{player_id:int}/tokens", 403, 404, 409)
    def issue_token(
        self,
        request: Request[Any, Any, Any],
        player_id: PathId,
        principal: PrincipalDependency,
        idempotency_key: IdempotencyKey,
    ) -> Response[PlayerToken]:
        """Issue another bearer token for a player; earlier tokens keep working."""
        principal.require(Role.OPERATOR)
        return run_idempotent(
            request,
            principal,
            idempotency_key,
            None,
            PlayerToken,
            lambda s: players.issue_player_token(s, player_id),
            status_code=201,
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
            return players.view_player(session, player_id, settings.currency)

    @get("/v1/me", sync_to_thread=True, responses=problems(403))
    def me(
        self,
        database: DatabaseDependency,
        principal: PrincipalDependency,
        settings: SettingsDependency,
    ) -> PlayerView:
        """The calling player's own wallet."""
        principal.require(Role.PLAYER)
        assert principal.player_id is not None
        with database.reading() as session:
            return players.view_player(session, principal.player_id, settings.currency)
