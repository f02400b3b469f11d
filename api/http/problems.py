"""RFC 9457 problem details: every refusal the service makes, with a stable `code`.

The one place where refusals become HTTP: the services' domain errors (`api.errors`), the
game's (`casino.errors`) and the ledger's (`ledger.errors`) are mapped to a status here, so
no service speaks HTTP, no handler builds an error response by hand, and nothing
unexpected leaks as a bare 500.
"""

import logging
import sqlite3
import traceback
from http import HTTPStatus
from typing import Any

import psycopg
from litestar import Request, Response
from litestar.exceptions import (
    HTTPException,
    MethodNotAllowedException,
    NotFoundException,
    ValidationException,
)
from litestar.types import ExceptionHandlersMap
from sqlalchemy.exc import DBAPIError, DisconnectionError
from sqlalchemy.exc import TimeoutError as PoolTimeoutError

from api.errors import (
    Conflict,
    DomainError,
    Forbidden,
    InvalidInput,
    NotFound,
    Refused,
    Restricted,
    Throttled,
    Unauthenticated,
)
from casino.errors import GameError, InvalidChoice, InvalidRules, InvalidSeed
from ledger.errors import AmountTooLarge, LedgerError, LimitExceeded

PROBLEM_MEDIA_TYPE = "application/problem+json"
logger = logging.getLogger("casino_war.api")


class Problem(Exception):
    """A refusal to send to the client as problem details."""

    def __init__(
        self,
        status: int,
        code: str,
        detail: str,
        *,
        title: str | None = None,
        errors: list[dict[str, Any]] | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(detail)
        self.status = status
        self.code = code
        self.detail = detail
        self.title = title or HTTPStatus(status).phrase
        self.errors = errors
        self.headers = headers or {}

    def body(self) -> dict[str, Any]:
        body: dict[str, Any] = {
            "type": f"/problems/{self.code}",
            "title": self.title,
            "status": self.status,
            "detail": self.detail,
            "code": self.code,
        }
        if self.errors is not None:
            body["errors"] = self.errors
        return body


def validation_problem(field: str, message: str) -> Problem:
    return Problem(
        422,
        "validation_error",
        f"{field}: {message}",
        errors=[{"field": field, "message": message}],
    )


_STATUS_OF_KIND: dict[type[DomainError], int] = {
    NotFound: 404,
    Conflict: 409,
    Refused: 422,
    Forbidden: 403,
    Restricted: 403,
    Throttled: 429,
    Unauthenticated: 401,
}
_GAME_STATUS = {
    "bet_out_of_range": 422,
    "bet_not_multiple_of_unit": 422,
    "hand_not_awaiting_decision": 409,
    "war_game_over": 409,
    "surrender_not_allowed": 422,
}


def problem_for_domain_error(error: DomainError) -> Problem:
    if isinstance(error, InvalidInput):
        return validation_problem(error.field, error.message)
    status = next(s for kind, s in _STATUS_OF_KIND.items() if isinstance(error, kind))
    headers = {"WWW-Authenticate": "Bearer"} if status == 401 else None
    if isinstance(error, Throttled):
        headers = {"Retry-After": str(error.retry_after)}
    return Problem(status, error.code, error.detail, headers=headers)


def problem_for_game_error(error: GameError) -> Problem:
    if isinstance(error, InvalidRules | InvalidSeed | InvalidChoice):
        return validation_problem(error.field, error.message)
    return Problem(_GAME_STATUS.get(error.code, 422), error.code, str(error))


def problem_for_ledger_error(error: LedgerError) -> Problem:
    if isinstance(error, LimitExceeded):
        return Problem(422, "insufficient_funds", "the wallet does not cover this amount")
    if isinstance(error, AmountTooLarge):
        return Problem(
            422, "amount_too_large", "a balance would leave the range the ledger can hold"
        )
    logger.error("ledger refused a posting: %s", error)
    return Problem(500, "internal_error", "the ledger refused the posting")


def as_problem(error: Exception) -> Problem | None:
    """The problem a refusal stands for; None for anything unexpected."""
    if isinstance(error, Problem):
        return error
    if isinstance(error, DomainError):
        return problem_for_domain_error(error)
    if isinstance(error, GameError):
        return problem_for_game_error(error)
    if isinstance(error, LedgerError):
        return problem_for_ledger_error(error)
    return None


def _respond(problem: Problem) -> Response[dict[str, Any]]:
    return Response(
        problem.body(),
        status_code=problem.status,
        media_type=PROBLEM_MEDIA_TYPE,
        headers=problem.headers,
    )


def _on_refusal(_: Request[Any, Any, Any], exc: Exception) -> Response[dict[str, Any]]:
    problem = as_problem(exc)
    assert problem is not None
    return _respond(problem)


def _on_validation(_: Request[Any, Any, Any], exc: Exception) -> Response[dict[str, Any]]:
    assert isinstance(exc, ValidationException)
    errors = [
        {
            "field": str(item.get("key") or item.get("source") or "body"),
            "message": item.get("message"),
        }
        for item in (exc.extra if isinstance(exc.extra, list) else [])
        if isinstance(item, dict)
    ]
    detail = "; ".join(f"{e['field']}: {e['message']}" for e in errors) or str(exc.detail)
    return _respond(Problem(422, "validation_error", detail, errors=errors))


def _on_http_exception(_: Request[Any, Any, Any], exc: Exception) -> Response[dict[str, Any]]:
    assert isinstance(exc, HTTPException)
    if isinstance(exc, NotFoundException):
        return _respond(Problem(404, "not_found", "no such resource"))
    if isinstance(exc, MethodNotAllowedException):
        return _respond(
            Problem(
                405, "method_not_allowed", "method not allowed on this path", headers=exc.headers
            )
        )
    status = exc.status_code
    if status == 400:  # Litestar's own 400s are bodies it could not decode
        return _respond(validation_problem("body", str(exc.detail)))
    code = HTTPStatus(status).phrase.lower().replace(" ", "_")
    return _respond(Problem(status, code, str(exc.detail), headers=exc.headers))


RETRY_AFTER_SECONDS = 5
_SQLITE_UNAVAILABLE = ("database is locked", "unable to open database", "disk i/o error")


def is_database_unavailable(exc: BaseException) -> bool:
    """A database that does not answer (unreachable, restarting, timing out, locked), as
    opposed to a statement that is wrong: the first is worth a retry, the second a bug."""
    if isinstance(exc, DisconnectionError | PoolTimeoutError):
        return True
    if isinstance(exc, DBAPIError) and exc.connection_invalidated:
        return True
    # The hot path runs on the driver's own cursor (`ledger.driver`): its errors come
    # unwrapped.
    original = exc.orig if isinstance(exc, DBAPIError) else exc
    if isinstance(original, psycopg.OperationalError):
        return True
    if isinstance(original, sqlite3.OperationalError):
        return str(original).lower().startswith(_SQLITE_UNAVAILABLE)
    return False


def unavailable() -> Problem:
    return Problem(
        503,
        "service_unavailable",
        "the database is unavailable; retry shortly",
        headers={"Retry-After": str(RETRY_AFTER_SECONDS)},
    )


def problem_of(exc: Exception) -> Problem:
    """The problem any exception is answered with: its refusal, 503 for a database that
    does not answer, else 500 (logged by type and frames only: an exception's message may
    quote data, a seed or a token, that must never reach a log)."""
    refusal = as_problem(exc)
    if refusal is not None:
        return refusal
    if is_database_unavailable(exc):
        logger.warning("database unavailable: %s", type(exc).__name__)
        return unavailable()
    frames = "".join(traceback.format_tb(exc.__traceback__))
    logger.error("unexpected %s\n%s", type(exc).__name__, frames)
    return Problem(500, "internal_error", "an unexpected error occurred")


def _on_unexpected(_: Request[Any, Any, Any], exc: Exception) -> Response[dict[str, Any]]:
    return _respond(problem_of(exc))


EXCEPTION_HANDLERS: ExceptionHandlersMap = {
    Problem: _on_refusal,
    DomainError: _on_refusal,
    GameError: _on_refusal,
    LedgerError: _on_refusal,
    ValidationException: _on_validation,
    HTTPException: _on_http_exception,
    Exception: _on_unexpected,
}
