"""Operator reports: payouts per gaming day, table or player; hands awaiting a decision."""

from typing import Annotated, Any, Literal

from litestar import Controller, Request, get
from litestar.params import QueryParameter
from litestar.response import Response
from sqlalchemy.orm import Session

from api.db.snapshot import read_snapshot
from api.domain.hands.schemas import UnfinishedReport
from api.domain.hands.unfinished import unfinished_hands
from api.domain.reports.csv import to_csv
from api.domain.reports.gaming_day import DayRange
from api.domain.reports.payouts import payout_report
from api.domain.reports.schemas import PayoutReportView
from api.domain.tokens.service import Role
from api.http.routing import (
    BEARER,
    DatabaseDependency,
    PrincipalDependency,
    SettingsDependency,
    problems,
)

CSV_MEDIA_TYPE = "text/csv"


class ReportController(Controller):
    path = "/v1/reports"
    tags = ("reports",)
    security = BEARER

    @get(
        "/payouts",
        sync_to_thread=True,
        responses=problems(403),
        response_description="The payout report (JSON, or CSV with `Accept: text/csv`).",
    )
    def get_payout_report(
        self,
        request: Request[Any, Any, Any],
        database: DatabaseDependency,
        settings: SettingsDependency,
        principal: PrincipalDependency,
        from_day: Annotated[str, QueryParameter(name="from", description="First gaming day.")],
        to_day: Annotated[
            str, QueryParameter(name="to", description="Last gaming day, inclusive.")
        ],
        group_by: Annotated[
            Literal["day", "table", "player"],
            QueryParameter(description="One row per gaming day, table or player."),
        ] = "day",
    ) -> Response[PayoutReportView]:
        """Handle, returns, house win, hold and theoretical win of hands settled in the range
        (by the gaming day of settlement), from the ledger, cross-checked with the records."""
        principal.require(Role.OPERATOR)
        days = DayRange.parse(from_day, to_day)
        with read_snapshot(database.engine) as connection:
            report = payout_report(
                connection,
                days,
                group_by,
                settings.time_zone,
                settings.gaming_day_start_hour,
            )
        if CSV_MEDIA_TYPE in request.headers.get("accept", ""):
            return Response(
                to_csv(report),  # type: ignore[arg-type]
                media_type=CSV_MEDIA_TYPE,
                headers={"Content-Disposition": 'attachment; filename="payouts.csv"'},
            )
        return Response(PayoutReportView.model_validate(report, from_attributes=True))

    @get("/unfinished", sync_to_thread=True, responses=problems(403))
    def list_unfinished_hands(
        self,
        database: DatabaseDependency,
        settings: SettingsDependency,
        principal: PrincipalDependency,
    ) -> UnfinishedReport:
        """Hands awaiting the player's decision, oldest first, with how long each has waited."""
        principal.require(Role.OPERATOR)
        with read_snapshot(database.engine) as connection, Session(bind=connection) as session:
            items = unfinished_hands(session, settings.decision_timeout_seconds)
        return UnfinishedReport(
            timeout_seconds=settings.decision_timeout_seconds,
            abandoned_tie_action=settings.abandoned_tie_action,
            items=items,
        )
