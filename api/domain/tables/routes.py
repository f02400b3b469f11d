"""Tables and their rules."""

from litestar import Controller, get
from litestar.params import JSONBody
from litestar.response import Response

from api.domain.tables import service as tables
from api.domain.tables.schemas import TableCreate, TablePage, TableView
from api.domain.tokens.service import Role
from api.http.routing import (
    BEARER,
    CommandDependency,
    Cursor,
    DatabaseDependency,
    Limit,
    PathId,
    PrincipalDependency,
    SettingsDependency,
    command,
    problems,
)
from api.pagination import DEFAULT_LIMIT


class TableController(Controller):
    path = "/v1/tables"
    tags = ("tables",)
    security = BEARER

    @get("/", sync_to_thread=True, responses=problems())
    def list_tables(
        self,
        database: DatabaseDependency,
        principal: PrincipalDependency,  # noqa: ARG002 - any role; resolving it authenticates
        limit: Limit = DEFAULT_LIMIT,
        cursor: Cursor = None,
    ) -> TablePage:
        """Every table, open or closed, oldest first."""
        with database.reading() as session:
            return TablePage.of(tables.list_tables(session, cursor, limit))

    @get("/{table_id:int}", sync_to_thread=True, responses=problems(404))
    def get_table(
        self,
        table_id: PathId,
        database: DatabaseDependency,
        principal: PrincipalDependency,  # noqa: ARG002 - any role; resolving it authenticates
    ) -> TableView:
        with database.reading() as session:
            return TableView.of(tables.get_table(session, table_id))

    @command("/", 403, 409)
    async def create_table(
        self,
        data: JSONBody[TableCreate],
        principal: PrincipalDependency,
        settings: SettingsDependency,
        command: CommandDependency,
    ) -> Response[TableView]:
        """Open a new table; its rules never change afterwards (new rules, new table)."""
        principal.require(Role.OPERATOR)
        return await command.run(
            data,
            lambda s: TableView.of(
                tables.create_table(
                    s,
                    data.name,
                    data.rule_fields(),
                    settings.currency,
                    allow_player_advantage=data.allow_player_advantage,
                    actor=principal,
                )
            ),
        )

    @command("/{table_id:int}/close", 403, 404, 409, status_code=200)
    async def close_table(
        self, table_id: PathId, principal: PrincipalDependency, command: CommandDependency
    ) -> Response[TableView]:
        """Stop new hands at the table; hands awaiting a decision there can still finish."""
        return await _set_open(table_id, principal, command, is_open=False)

    @command("/{table_id:int}/open", 403, 404, 409, status_code=200)
    async def open_table(
        self, table_id: PathId, principal: PrincipalDependency, command: CommandDependency
    ) -> Response[TableView]:
        return await _set_open(table_id, principal, command, is_open=True)


async def _set_open(
    table_id: int, principal: PrincipalDependency, command: CommandDependency, *, is_open: bool
) -> Response[TableView]:
    principal.require(Role.OPERATOR)
    return await command.run(
        None,
        lambda s: TableView.of(tables.set_open(s, table_id, is_open=is_open, actor=principal)),
    )
