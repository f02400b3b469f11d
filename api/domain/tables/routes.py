"""Tables and their rules."""

from typing import Any

from litestar import Controller, Request, get
from litestar.params import JSONBody
from litestar.response import Response

from api.domain.tables import service as tables
from api.domain.tables.schemas import TableCreate, TablePage, TableView
from api.domain.tokens.service import Role
from api.http.routing import (
    BEARER,
    Cursor,
    DatabaseDependency,
    IdempotencyKey,
    Limit,
    PathId,
    PrincipalDependency,
    SettingsDependency,
    command,
    problems,
    run_idempotent,
)


class TableController(Controller):
    path = "/v1/tables"
    tags = ("tables",)
    security = BEARER

    @get("/", sync_to_thread=True, responses=problems())
    def list_tables(
        self,
        database: DatabaseDependency,
        principal: PrincipalDependency,  # noqa: ARG002 - any role; resolving it authenticates
        limit: Limit = 50,
        cursor: Cursor = None,
    ) -> TablePage:
        """Every table, open or closed, oldest first."""
        with database.reading() as session:
            return tables.list_tables(session, cursor, limit)

    @get("/{table_id:int}", sync_to_thread=True, responses=problems(404))
    def get_table(
        self,
        table_id: PathId,
        database: DatabaseDependency,
        principal: PrincipalDependency,  # noqa: ARG002 - any role; resolving it authenticates
    ) -> TableView:
        with database.reading() as session:
            return tables.to_view(tables.get_table(session, table_id))

    @command("/", 403, 409)
    def create_table(
        self,
        request: Request[Any, Any, Any],
        data: JSONBody[TableCreate],
        principal: PrincipalDependency,
        settings: SettingsDependency,
        idempotency_key: IdempotencyKey,
    ) -> Response[TableView]:
        """Open a new table; its rules never change afterwards (new rules, new table)."""
        principal.require(Role.OPERATOR)
        return run_idempotent(
            request,
            principal,
            idempotency_key,
            data,
            TableView,
            lambda s: tables.create_table(s, data, settings.currency),
            status_code=201,
        )

    @command("/{table_id:int}/close", 403, 404, 409, status_code=200)
    def close_table(
        self,
        request: Request[Any, Any, Any],
        table_id: PathId,
        principal: PrincipalDependency,
        idempotency_key: IdempotencyKey,
    ) -> Response[TableView]:
        """Stop new hands at the table; hands awaiting a decision there can still finish."""
        return self._set_open(request, table_id, principal, idempotency_key, False)

    @command("/{table_id:int}/open", 403, 404, 409, status_code=200)
    def open_table(
        self,
        request: Request[Any, Any, Any],
        table_id: PathId,
        principal: PrincipalDependency,
        idempotency_key: IdempotencyKey,
    ) -> Response[TableView]:
        return self._set_open(request, table_id, principal, idempotency_key, True)

    @staticmethod
    def _set_open(
        request: Request[Any, Any, Any],
        table_id: int,
        principal: PrincipalDependency,
        idempotency_key: str,
        is_open: bool,
    ) -> Response[TableView]:
        principal.require(Role.OPERATOR)
        return run_idempotent(
            request,
            principal,
            idempotency_key,
            None,
            TableView,
            lambda s: tables.set_open(s, table_id, is_open=is_open),
            status_code=200,
        )
