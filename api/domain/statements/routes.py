"""Players' money history from the ledger: transactions and statements for the player and
for staff, and the operator's daily player account summary (JSON or CSV)."""

import csv
import io
from datetime import UTC, datetime
from typing import Annotated, Any

from litestar import Controller, Request, get
from litestar.params import QueryParameter
from litestar.response import Response

from api.db.database import Database
from api.db.snapshot import read_snapshot
from api.domain.reports.gaming_day import DayRange, day_bounds
from api.domain.statements import service as statements
from api.domain.statements.schemas import (
    PlayerAccountRow,
    PlayerAccountsView,
    StatementLineView,
    StatementView,
    WalletTransactionPage,
)
from api.domain.tokens.service import Principal, Role
from api.http.routing import (
    BEARER,
    Cursor,
    DatabaseDependency,
    Limit,
    PathId,
    PrincipalDependency,
    SettingsDependency,
    problems,
    query_instant,
)
from api.pagination import DEFAULT_LIMIT
from api.settings import Settings

CSV_MEDIA_TYPE = "text/csv"
FromTime = Annotated[
    datetime | None, QueryParameter(name="from", description="From this instant (RFC 3339).")
]
ToTime = Annotated[
    datetime | None, QueryParameter(name="to", description="Before this instant (RFC 3339).")
]
FromDay = Annotated[str, QueryParameter(name="from", description="First gaming day.")]
ToDay = Annotated[str, QueryParameter(name="to", description="Last gaming day, inclusive.")]
ReportDay = Annotated[str, QueryParameter(description="The gaming day, YYYY-MM-DD.")]


class StatementController(Controller):
    tags = ("statements",)
    security = BEARER

    @get("/v1/me/transactions", sync_to_thread=True, responses=problems(403))
    def list_my_transactions(
        self,
        database: DatabaseDependency,
        principal: PrincipalDependency,
        from_time: FromTime = None,
        to_time: ToTime = None,
        limit: Limit = DEFAULT_LIMIT,
        cursor: Cursor = None,
    ) -> WalletTransactionPage:
        """The caller's wallet history, oldest first, each with the balance after it."""
        player_id = principal.own_player_id()
        return _transactions(database, player_id, from_time, to_time, cursor, limit)

    @get(
        "/v1/players/{player_id:int}/transactions",
        sync_to_thread=True,
        responses=problems(403, 404),
    )
    def list_player_transactions(
        self,
        player_id: PathId,
        database: DatabaseDependency,
        principal: PrincipalDependency,
        from_time: FromTime = None,
        to_time: ToTime = None,
        limit: Limit = DEFAULT_LIMIT,
        cursor: Cursor = None,
    ) -> WalletTransactionPage:
        """A player's wallet history (operators and auditors)."""
        _require_staff(principal)
        return _transactions(database, player_id, from_time, to_time, cursor, limit, check=True)

    @get("/v1/me/statement", sync_to_thread=True, responses=problems(403))
    def get_my_statement(
        self,
        database: DatabaseDependency,
        settings: SettingsDependency,
        principal: PrincipalDependency,
        from_day: FromDay,
        to_day: ToDay,
    ) -> StatementView:
        """The caller's statement over gaming days, per currency, from the ledger."""
        player_id = principal.own_player_id()
        return _statement(database, settings, player_id, DayRange.parse(from_day, to_day))

    @get(
        "/v1/players/{player_id:int}/statement",
        sync_to_thread=True,
        responses=problems(403, 404),
    )
    def get_player_statement(
        self,
        player_id: PathId,
        database: DatabaseDependency,
        settings: SettingsDependency,
        principal: PrincipalDependency,
        from_day: FromDay,
        to_day: ToDay,
    ) -> StatementView:
        """A player's statement over gaming days (operators and auditors)."""
        _require_staff(principal)
        return _statement(database, settings, player_id, DayRange.parse(from_day, to_day))

    @get(
        "/v1/reports/player-accounts",
        sync_to_thread=True,
        responses=problems(403),
        response_description="The summary (JSON, or CSV with `Accept: text/csv`).",
    )
    def get_player_accounts_report(
        self,
        request: Request[Any, Any, Any],
        database: DatabaseDependency,
        settings: SettingsDependency,
        principal: PrincipalDependency,
        day: ReportDay,
    ) -> Response[PlayerAccountsView]:
        """The daily player account summary: every player's wallet per currency, with the
        statement's columns for the gaming day."""
        view = _player_accounts(database, settings, principal, day)
        if CSV_MEDIA_TYPE in request.headers.get("accept", ""):
            return _csv_response(view)  # type: ignore[return-value]
        return Response(view)

    @get(
        "/v1/reports/player-accounts.csv",
        sync_to_thread=True,
        media_type=CSV_MEDIA_TYPE,
        responses=problems(403),
        response_description="The summary as CSV.",
    )
    def get_player_accounts_report_csv(
        self,
        database: DatabaseDependency,
        settings: SettingsDependency,
        principal: PrincipalDependency,
        day: ReportDay,
    ) -> Response[str]:
        """The daily player account summary as CSV, for generated clients."""
        return _csv_response(_player_accounts(database, settings, principal, day))


def _player_accounts(
    database: Database, settings: Settings, principal: Principal, day: str
) -> PlayerAccountsView:
    principal.require(Role.OPERATOR)
    days = DayRange.parse(day, day)
    start, end = day_bounds(
        days.first, days.last, settings.time_zone, settings.gaming_day_start_hour
    )
    with read_snapshot(database.engine) as connection:
        lines = statements.statements(connection, start, end)
    return PlayerAccountsView(
        day=days.first,
        time_zone=settings.gaming_day_timezone,
        generated_at=datetime.now(UTC),
        rows=[PlayerAccountRow.model_validate(line) for line in lines],
    )


def _csv_response(view: PlayerAccountsView) -> Response[str]:
    return Response(
        _csv(view),
        media_type=CSV_MEDIA_TYPE,
        headers={"Content-Disposition": 'attachment; filename="player-accounts.csv"'},
    )


def _require_staff(principal: Principal) -> None:
    principal.require(Role.OPERATOR, Role.AUDITOR)


def _transactions(
    database: Database,
    player_id: int,
    since: datetime | None,
    until: datetime | None,
    cursor: str | None,
    limit: int,
    *,
    check: bool = False,
) -> WalletTransactionPage:
    since, until = query_instant("from", since), query_instant("to", until)
    with read_snapshot(database.engine) as connection:
        if check:
            statements.require_player(connection, player_id)
        page = statements.wallet_transactions(connection, player_id, since, until, cursor, limit)
    return WalletTransactionPage.model_validate(page)


def _statement(
    database: Database, settings: Settings, player_id: int, days: DayRange
) -> StatementView:
    start, end = day_bounds(
        days.first, days.last, settings.time_zone, settings.gaming_day_start_hour
    )
    with read_snapshot(database.engine) as connection:
        lines = statements.statements(connection, start, end, player_id)
    return StatementView(
        player_id=player_id,
        from_day=days.first,
        to_day=days.last,
        time_zone=settings.gaming_day_timezone,
        currencies=[StatementLineView.model_validate(line) for line in lines],
    )


def _csv(view: PlayerAccountsView) -> str:
    """A header naming the day and zone, the column names, then a row per player and
    currency (a day with no accounts says so)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["# player account summary", f"gaming day {view.day}", view.time_zone])
    columns = list(PlayerAccountRow.model_fields)
    writer.writerow(columns)
    for row in view.rows:
        writer.writerow([getattr(row, column) for column in columns])
    if not view.rows:
        writer.writerow(["no player accounts"])
    return out.getvalue()
