"""Operator reports: payouts per gaming day, table or player; hands awaiting a decision."""

from typing import Annotated, Any, Literal

from litestar import Controller, Request, get
from litestar.params import QueryParameter
from litestar.response import Response
from sqlalchemy.orm import Session

from api.db.database import Database
from api.db.snapshot import read_snapshot
from api.domain.hands.schemas import UnfinishedReport
from api.domain.hands.unfinished import unfinished_hands
from api.domain.reports.csv import to_csv
from api.domain.reports.gaming_day import DayRange
from api.domain.reports.payouts import payout_report
from api.domain.reports.results import GroupBy, PayoutReport
from api.domain.reports.schemas import PayoutReportView
from api.domain.tokens.service import Principal, Role
from api.http.routing import (
    BEARER,
    DatabaseDependency,
    PrincipalDependency,
    SettingsDependency,
    problems,
)
from api.settings import Settings

CSV_MEDIA_TYPE = "text/csv"


FromDay = Annotated[str, QueryParameter(name="from", description="First gaming day.")]
ToDay = Annotated[str, QueryParameter(name="to", description="Last gaming day, inclusive.")]
GroupByParameter = Annotated[
    Literal["day", "table", "player"],
    QueryParameter(description="One row per gaming day, table or player."),
]


def _payouts(
    database: Database,
    settings: Settings,
    principal: Principal,
    from_day: str,
    to_day: str,
    group_by: GroupBy,
) -> PayoutReport:
    principal.require(Role.OPERATOR)
    days = DayRange.parse(from_day, to_day)
    with read_snapshot(database.engine) as connection:
        return payout_report(
            connection, days, group_by, settings.time_zone, settings.gaming_day_start_hour
        )


def _csv_response(report: PayoutReport) -> Response[str]:
    return Response(
        to_csv(report),
        media_type=CSV_MEDIA_TYPE,
        headers={"Content-Disposition": 'attachment; filename="payouts.csv"'},
    )


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
        from_day: FromDay,
        to_day: ToDay,
        group_by: GroupByParameter = "day",
    ) -> Response[PayoutReportView]:
        """Handle, returns, house win, hold and theoretical win of hands settled in the range
        (by the gaming day of settlement), from the ledger, cross-checked with the records."""
        report = _payouts(database, settings, principal, from_day, to_day, group_by)
        if CSV_MEDIA_TYPE in request.headers.get("accept", ""):
            return _csv_response(report)  # type: ignore[return-value]
        return Response(PayoutReportView.model_validate(report, from_attributes=True))

    @get(
        "/payouts.csv",
        sync_to_thread=True,
        media_type=CSV_MEDIA_TYPE,
        responses=problems(403),
        response_description="The payout report as CSV.",
    )
    def get_payout_report_csv(
        self,
        database: DatabaseDependency,
        settings: SettingsDependency,
        principal: PrincipalDependency,
        from_day: FromDay,
        to_day: ToDay,
        group_by: GroupByParameter = "day",
    ) -> Response[str]:
        """The payout report as CSV (the same as `getPayoutReport` with `Accept: text/csv`),
        for clients generated from this document, which read one media type a route."""
        report = _payouts(database, settings, principal, from_day, to_day, group_by)
        return _csv_response(report)

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
