"""The cashier: deposits and withdrawals, operators only."""

import re
from collections.abc import Callable

from litestar import Controller
from litestar.params import JSONBody
from litestar.response import Response
from sqlalchemy.orm import Session

from api.domain.cashier import service as cashier
from api.domain.cashier.schemas import CashierReceipt, CashierRequest
from api.domain.protection.policy import ProtectionPolicy
from api.domain.tokens.service import Principal, Role
from api.http.hot_path import HotCommand
from api.http.idempotency import Operation, PlayersTurn
from api.http.routing import (
    BEARER,
    CommandDependency,
    IdempotentCommand,
    PrincipalDependency,
    SettingsDependency,
    command,
)
from api.settings import Settings


class CashierController(Controller):
    path = "/v1/cashier"
    tags = ("cashier",)
    security = BEARER

    @command("/deposits", 403, 404, 409)
    async def make_deposit(
        self,
        data: JSONBody[CashierRequest],
        principal: PrincipalDependency,
        settings: SettingsDependency,
        command: CommandDependency,
    ) -> Response[CashierReceipt]:
        """Credit a player's wallet with money received by the cashier."""
        return await _cashier_move(data, principal, settings, command, cashier.deposit)

    @command("/withdrawals", 403, 404, 409)
    async def make_withdrawal(
        self,
        data: JSONBody[CashierRequest],
        principal: PrincipalDependency,
        settings: SettingsDependency,
        command: CommandDependency,
    ) -> Response[CashierReceipt]:
        """Pay money out of a player's wallet; never beyond its balance."""
        return await _cashier_move(data, principal, settings, command, cashier.withdraw)


CashierMove = Callable[[Session, int, int, str, str, ProtectionPolicy, int | None], cashier.Receipt]


def moving(
    move: CashierMove, data: CashierRequest, principal: Principal, settings: Settings
) -> Operation:
    principal.require(Role.OPERATOR)
    return PlayersTurn(
        data.player_id,
        lambda session: CashierReceipt.model_validate(
            move(
                session,
                data.player_id,
                data.amount,
                data.currency,
                settings.currency,
                settings.protection,
                principal.token_id,
            )
        ),
        lambda session: cashier.opening_after_lock(session, data.player_id, data.currency),
    )


async def _cashier_move(
    data: CashierRequest,
    principal: Principal,
    settings: Settings,
    command: IdempotentCommand,
    move: CashierMove,
) -> Response[CashierReceipt]:
    return await command.run(data, moving(move, data, principal, settings))


def _hot(path: str, move: CashierMove) -> HotCommand:
    return HotCommand(
        re.compile(path),
        CashierRequest,
        frozenset({Role.OPERATOR}),
        201,
        lambda call: moving(move, call.body, call.principal, call.settings),
    )


HOT_COMMANDS = (
    _hot("/v1/cashier/deposits", cashier.deposit),
    _hot("/v1/cashier/withdrawals", cashier.withdraw),
)
"""Deposits and withdrawals on the hot path (`api.http.hot_path`): the same operations,
role and status code as the two routes above, which serve every request it passes on."""
