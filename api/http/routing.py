"""What every route needs: the caller, the database, idempotency and documented errors."""

from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, Any

from litestar import Request, Response, post
from litestar.connection import ASGIConnection
from litestar.datastructures import State
from litestar.di import NamedDependency
from litestar.handlers import BaseRouteHandler, HTTPRouteHandler
from litestar.openapi.datastructures import ResponseSpec
from litestar.openapi.spec import SecurityRequirement
from litestar.params import HeaderParameter, PathParameter, QueryParameter
from pydantic import BaseModel

from api.db.database import Database
from api.domain.tokens.service import Authenticator, Principal
from api.errors import InvalidInput
from api.http import idempotency
from api.http.problems import PROBLEM_MEDIA_TYPE, Problem
from api.http.schemas import MAX_ID, PRINTABLE, in_utc
from api.pagination import MAX_LIMIT
from api.settings import Settings

BEARER: list[SecurityRequirement] = [{"bearer": []}]
"""Every route but the probes needs a bearer token (documented on each controller)."""

DatabaseDependency = NamedDependency[Database]
PrincipalDependency = NamedDependency[Principal]
SettingsDependency = NamedDependency[Settings]

IdempotencyKey = Annotated[
    str,
    HeaderParameter(
        name=idempotency.HEADER,
        required=True,
        min_length=1,
        max_length=idempotency.MAX_KEY_LENGTH,
        pattern=PRINTABLE,
        description="1-255 characters, no control characters, scoped to the caller: a retry "
        "with the same key and body replays the first response.",
    ),
]
PathId = Annotated[int, PathParameter(ge=1, le=MAX_ID)]
QueryId = Annotated[int | None, QueryParameter(ge=1, le=MAX_ID, required=False)]
Limit = Annotated[
    int, QueryParameter(ge=1, le=MAX_LIMIT, description=f"Page size (1-{MAX_LIMIT}).")
]
Cursor = Annotated[
    str | None, QueryParameter(required=False, description="next_cursor of the previous page.")
]


class ProblemDetails(BaseModel):
    """RFC 9457 problem details; `code` is the machine-readable reason."""

    type: str
    title: str
    status: int
    detail: str
    code: str
    errors: list[dict[str, Any]] | None = None


def problems(*statuses: int) -> dict[int, ResponseSpec]:
    """OpenAPI documentation of the problems a route can answer with."""
    return {
        status: ResponseSpec(
            data_container=ProblemDetails,
            media_type=PROBLEM_MEDIA_TYPE,
            description="Problem details",
            generate_examples=False,
        )
        # Any authenticated route may answer 429 (an address that failed too often) and
        # 503 (the database does not answer).
        for status in (401, 422, 429, 503, *statuses)
    }


async def require_idempotency_key(
    connection: ASGIConnection[Any, Any, Any, Any], _: BaseRouteHandler
) -> None:
    """Guard of every state-changing POST, run before its parameters are parsed.

    The caller is authenticated first, so an anonymous request is a 401 whatever else is
    wrong with it; then the key must be there.
    """
    authenticator: Authenticator = connection.app.state.authenticator
    await authenticator.resolve(connection.headers.get("authorization"), _address(connection))
    if not connection.headers.get(idempotency.HEADER):
        raise Problem(
            400, "idempotency_key_required", f"the {idempotency.HEADER} header is required"
        )


def command(path: str, *problem_statuses: int, status_code: int = 201) -> HTTPRouteHandler:
    """A state-changing POST: Idempotency-Key required, its problems documented. Its handler
    is a coroutine that awaits `IdempotentCommand.run`, which decides where the unit of work
    runs."""
    return post(
        path,
        status_code=status_code,
        guards=[require_idempotency_key],
        responses=problems(400, *problem_statuses),
    )


def provide_database(state: State) -> Database:
    database: Database = state.database
    return database


def provide_settings(state: State) -> Settings:
    settings: Settings = state.settings
    return settings


async def provide_principal(request: Request[Any, Any, Any], state: State) -> Principal:
    authenticator: Authenticator = state.authenticator
    return await authenticator.resolve(request.headers.get("authorization"), _address(request))


def _address(connection: ASGIConnection[Any, Any, Any, Any]) -> str:
    """The client's address as the server saw it (behind a proxy, run uvicorn with
    --forwarded-allow-ips so that this is the client's, not the proxy's)."""
    client = connection.client
    return client.host if client is not None else "unknown"


@dataclass(frozen=True, slots=True)
class IdempotentCommand:
    """The state-changing request being handled, ready to run its work at most once per
    (caller, Idempotency-Key), answering with the route's status code."""

    request: Request[Any, Any, Any]
    principal: Principal
    key: str

    async def run(self, body: BaseModel | None, operation: idempotency.Operation) -> Response[Any]:
        """Run the unit of work at most once for this key (`Idempotency.execute` decides
        where) and answer with the route's status code."""
        payload = body.model_dump(mode="json") if body is not None else None
        request_fingerprint = idempotency.fingerprint(
            self.request.method, self.request.url.path, payload
        )
        runner: idempotency.Idempotency = self.request.app.state.idempotency
        status_code = self.request.route_handler.status_code
        assert status_code is not None  # `command` always sets it
        answer = await runner.execute(
            self.principal, self.key, request_fingerprint, operation, status_code=status_code
        )
        return Response(
            answer.body,
            status_code=answer.status,
            media_type=answer.media_type,
            headers=dict(answer.headers),
        )


def provide_command(
    request: Request[Any, Any, Any],
    principal: PrincipalDependency,
    idempotency_key: IdempotencyKey,
) -> IdempotentCommand:
    return IdempotentCommand(request, principal, idempotency_key)


CommandDependency = NamedDependency[IdempotentCommand]


def query_instant(name: str, moment: datetime | None) -> datetime | None:
    """A query parameter's instant in UTC (`in_utc`), or a 422 naming the parameter: the
    framework parses a date-time without its offset, or one outside the UTC calendar, which
    the database could not compare."""
    if moment is None:
        return None
    try:
        return in_utc(moment)
    except ValueError as refused:
        raise InvalidInput(name, str(refused)) from None
