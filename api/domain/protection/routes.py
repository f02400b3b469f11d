"""Player protection: limits and self-exclusion, for the player and for operators."""

from litestar import Controller, get
from litestar.params import JSONBody
from litestar.response import Response

from api.domain.protection import service as protection
from api.domain.protection.policy import PERIODS
from api.domain.protection.schemas import (
    ExclusionRequest,
    ExclusionView,
    LimitsUpdate,
    LimitsView,
)
from api.domain.tokens.service import Principal, Role
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
from api.settings import Settings


class ProtectionController(Controller):
    tags = ("player protection",)
    security = BEARER

    @get("/v1/me/limits", sync_to_thread=True, responses=problems(403))
    def get_my_limits(
        self,
        database: DatabaseDependency,
        settings: SettingsDependency,
        principal: PrincipalDependency,
    ) -> LimitsView:
        """The caller's limits in force, and any looser ones waiting out the cooling-off."""
        player_id = principal.own_player_id()
        with database.reading() as session:
            return LimitsView.model_validate(
                protection.limits_of(session, player_id, settings.protection)
            )

    @command("/v1/me/limits", 403, status_code=200)
    async def set_my_limits(
        self,
        data: JSONBody[LimitsUpdate],
        settings: SettingsDependency,
        principal: PrincipalDependency,
        command: CommandDependency,
    ) -> Response[LimitsView]:
        """Set, lower, raise or remove limits: lowering is at once, raising or removing
        after the cooling-off period."""
        return await _set_limits(principal.own_player_id(), data, settings, principal, command)

    @get("/v1/players/{player_id:int}/limits", sync_to_thread=True, responses=problems(403, 404))
    def get_player_limits(
        self,
        player_id: PathId,
        database: DatabaseDependency,
        settings: SettingsDependency,
        principal: PrincipalDependency,
    ) -> LimitsView:
        """A player's limits (operators and auditors)."""
        principal.require(Role.OPERATOR, Role.AUDITOR)
        with database.reading() as session:
            protection.require_player(session, player_id)
            return LimitsView.model_validate(
                protection.limits_of(session, player_id, settings.protection)
            )

    @command("/v1/players/{player_id:int}/limits", 403, 404, status_code=200)
    async def set_player_limits(
        self,
        player_id: PathId,
        data: JSONBody[LimitsUpdate],
        settings: SettingsDependency,
        principal: PrincipalDependency,
        command: CommandDependency,
    ) -> Response[LimitsView]:
        """Set a player's limits for them (operators), under the same cooling-off rules."""
        principal.require(Role.OPERATOR)
        return await _set_limits(player_id, data, settings, principal, command)

    @get("/v1/me/exclusion", sync_to_thread=True, responses=problems(403))
    def get_my_exclusion(
        self, database: DatabaseDependency, principal: PrincipalDependency
    ) -> ExclusionView:
        """Whether the caller is in a time-out or self-exclusion, and until when."""
        player_id = principal.own_player_id()
        with database.reading() as session:
            return ExclusionView.model_validate(protection.exclusion_of(session, player_id))

    @command("/v1/me/exclusion", 403, 409)
    async def exclude_me(
        self,
        data: JSONBody[ExclusionRequest],
        principal: PrincipalDependency,
        command: CommandDependency,
    ) -> Response[ExclusionView]:
        """Take a time-out (`until`) or exclude oneself indefinitely (`until` null); it cannot
        be ended early."""
        return await _exclude(principal.own_player_id(), data, principal, command)

    @command("/v1/players/{player_id:int}/exclusion", 403, 404, 409)
    async def exclude_player(
        self,
        player_id: PathId,
        data: JSONBody[ExclusionRequest],
        principal: PrincipalDependency,
        command: CommandDependency,
    ) -> Response[ExclusionView]:
        """Exclude a player (operators), as the player could; it cannot be ended early."""
        principal.require(Role.OPERATOR)
        return await _exclude(player_id, data, principal, command)


async def _set_limits(
    player_id: int,
    data: LimitsUpdate,
    settings: Settings,
    principal: Principal,
    command: CommandDependency,
) -> Response[LimitsView]:
    changes = [
        protection.LimitChange(
            kind=change.kind,
            period=None if change.period is None else PERIODS[change.period.value],
            currency=None if change.kind == "play_time" else change.currency or settings.currency,
            amount=change.amount,
        )
        for change in data.limits
    ]
    policy = settings.protection
    return await command.run(
        data,
        lambda s: LimitsView.model_validate(
            protection.set_limits(s, player_id, changes, policy, principal)
        ),
    )


async def _exclude(
    player_id: int, data: ExclusionRequest, principal: Principal, command: CommandDependency
) -> Response[ExclusionView]:
    return await command.run(
        data,
        lambda s: ExclusionView.model_validate(
            protection.exclude(s, player_id, data.until, data.reason, principal)
        ),
    )
