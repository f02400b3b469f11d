"""What every route needs: the caller, the database, idempotency and documented errors."""

from collections.abc import Callable
from typing import Annotated, Any, TypeVar

from litestar import Request
from litestar.datastructures import State
from litestar.di import NamedDependency
from litestar.openapi.datastructures import ResponseSpec
from litestar.params import HeaderParameter, QueryParameter
from pydantic import BaseModel
from sqlalchemy.orm import Session

from api import idempotency
from api.auth import Principal, authenticate
from api.db.database import Database
from api.problems import PROBLEM_MEDIA_TYPE
from api.settings import Settings

M = TypeVar("M", bound=BaseModel)

DatabaseDependency = NamedDependency[Database]
PrincipalDependency = NamedDependency[Principal]
SettingsDependency = NamedDependency[Settings]

IdempotencyKey = Annotated[
    str | None,
    HeaderParameter(
        name=idempotency.HEADER,
        required=False,
        description="1-255 characters, scoped to the caller; required on this request.",
    ),
]
Limit = Annotated[int, QueryParameter(ge=1, le=200, description="Page size (1-200).")]
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
        )
        for status in (401, 422, *statuses)
    }


def provide_database(state: State) -> Database:
    database: Database = state.database
    return database


def provide_settings(state: State) -> Settings:
    settings: Settings = state.settings
    return settings


def provide_principal(request: Request[Any, Any, Any], database: DatabaseDependency) -> Principal:
    with database.sessions() as session:
        return authenticate(session, request.headers.get("authorization"))


def run_idempotent(
    request: Request[Any, Any, Any],
    database: Database,
    principal: Principal,
    key: str | None,
    body: BaseModel | None,
    model: type[M],
    operation: Callable[[Session], M],
    *,
    status_code: int,
) -> Any:
    """Run a state-changing request at most once per (caller, Idempotency-Key)."""
    checked_key = idempotency.require_key(key)
    payload = body.model_dump(mode="json") if body is not None else None
    request_fingerprint = idempotency.fingerprint(request.method, request.url.path, payload)
    return idempotency.run_idempotent(
        database,
        principal,
        checked_key,
        request_fingerprint,
        model,
        operation,
        status_code=status_code,
    )
