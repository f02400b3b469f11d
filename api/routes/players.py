"""Players, wallets and the cashier."""

from collections.abc import Callable
from typing import Any

from litestar import Controller, Request, get
from litestar.params import JSONBody
from litestar.response import Response
from sqlalchemy.orm import Session

from api.auth import Principal, Role
from api.problems import not_found
from api.routes.common import (
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
from api.schemas import (
    CashierReceipt,
    CashierRequest,
    PlayerCreate,
    PlayerCreated,
    PlayerToken,
    PlayerView,
)
from api.services import cashier, players
from api.settings import Settings


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
            raise not_found("player")
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


class CashierController(Controller):
    path = "/v1/cashier"
    tags = ("cashier",)
    security = BEARER

    @command("/deposits", 403, 404, 409)
    def deposit(
        self,
        request: Request[Any, Any, Any],
        data: JSONBody[CashierRequest],
        principal: PrincipalDependency,
        settings: SettingsDependency,
        idempotency_key: IdempotencyKey,
    ) -> Response[CashierReceipt]:
        """Credit a player's wallet with money received by the cashier."""
        return _cashier_move(request, data, principal, settings, idempotency_key, cashier.deposit)

    @command("/withdrawals", 403, 404, 409)
    def withdraw(
        self,
        request: Request[Any, Any, Any],
        data: JSONBody[CashierRequest],
        principal: PrincipalDependency,
        settings: SettingsDependency,
        idempotency_key: IdempotencyKey,
    ) -> Response[CashierReceipt]:
        """Pay money out of a player's wallet; never beyond its balance."""
        return _cashier_move(request, data, principal, settings, idempotency_key, cashier.withdraw)


CashierMove = Callable[[Session, int, int, str, str], CashierReceipt]


def _cashier_move(
    request: Request[Any, Any, Any],
    data: CashierRequest,
    principal: Principal,
    settings: Settings,
    idempotency_key: str,
    move: CashierMove,
) -> Response[CashierReceipt]:
    principal.require(Role.OPERATOR)
    return run_idempotent(
        request,
        principal,
        idempotency_key,
        data,
        CashierReceipt,
        lambda s: move(s, data.player_id, data.amount, data.currency, settings.currency),
        status_code=201,
    )
