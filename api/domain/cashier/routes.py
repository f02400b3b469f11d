"""The cashier: deposits and withdrawals, operators only."""

from collections.abc import Callable
from typing import Any

from litestar import Controller, Request
from litestar.params import JSONBody
from litestar.response import Response
from sqlalchemy.orm import Session

from api.domain.cashier import service as cashier
from api.domain.cashier.schemas import CashierReceipt, CashierRequest
from api.domain.tokens.service import Principal, Role
from api.http.routing import (
    BEARER,
    IdempotencyKey,
    PrincipalDependency,
    SettingsDependency,
    command,
    run_idempotent,
)
from api.settings import Settings


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
