"""Tokens: staff list them and revoke any; every caller may revoke its own."""

from typing import Annotated

from litestar import Controller, get
from litestar.params import QueryParameter
from litestar.response import Response

from api.domain.tokens import lifecycle
from api.domain.tokens.schemas import TokenPage, TokenView
from api.domain.tokens.service import Role
from api.http.routing import (
    BEARER,
    CommandDependency,
    Cursor,
    DatabaseDependency,
    Limit,
    PathId,
    PrincipalDependency,
    QueryId,
    command,
    problems,
)
from api.pagination import DEFAULT_LIMIT


class TokenController(Controller):
    tags = ("tokens",)
    security = BEARER

    @get("/v1/tokens", sync_to_thread=True, responses=problems(403))
    def list_tokens(
        self,
        database: DatabaseDependency,
        principal: PrincipalDependency,
        role: Annotated[Role | None, QueryParameter(description="Only this role.")] = None,
        player_id: QueryId = None,
        active: Annotated[
            bool | None, QueryParameter(description="Only live (true) or dead (false) tokens.")
        ] = None,
        limit: Limit = DEFAULT_LIMIT,
        cursor: Cursor = None,
    ) -> TokenPage:
        """Every token, oldest first (operators and auditors); never the secret."""
        principal.require(Role.OPERATOR, Role.AUDITOR)
        filters = lifecycle.TokenFilters(role=role, player_id=player_id, active=active)
        with database.reading() as session:
            return TokenPage.model_validate(lifecycle.list_tokens(session, filters, cursor, limit))

    @command("/v1/tokens/{token_id:int}/revoke", 403, 404, status_code=200)
    async def revoke_token(
        self, token_id: PathId, principal: PrincipalDependency, command: CommandDependency
    ) -> Response[TokenView]:
        """Revoke any token (operators); every worker refuses it within a second."""
        principal.require(Role.OPERATOR)
        return await command.run(
            None, lambda s: TokenView.model_validate(lifecycle.revoke(s, token_id, principal))
        )

    @command("/v1/me/token/revoke", status_code=200)
    async def revoke_my_token(
        self, principal: PrincipalDependency, command: CommandDependency
    ) -> Response[TokenView]:
        """Revoke the token making this request (any role): a sign-out that sticks."""
        return await command.run(
            None,
            lambda s: TokenView.model_validate(lifecycle.revoke(s, principal.token_id, principal)),
        )
