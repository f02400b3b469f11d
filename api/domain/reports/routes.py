"""Operator reports: payouts per gaming day, table or player; hands awaiting a decision."""

from datetime import date
from typing import Annotated, Any, Literal

from litestar import Controller, Request, get
from litestar.params import QueryParameter
from litestar.response import Response
from sqlalchemy.orm import Session

from api.db.snapshot import read_snapshot
from api.domain.hands.schemas import UnfinishedReport
from api.domain.hands.unfinished import unfinished_hands
from api.domain.reports.gaming_day import parse_day
from api.domain.reports.payouts import payout_report, to_csv
from api.domain.reports.schemas import PayoutReportView
from api.domain.tokens.service import Role
from api.errors import InvalidInput
from api.http.routing import (
    BEARER,
    DatabaseDependency,
    PrincipalDependency,
    SettingsDependency,
    problems,
)

CSV_MEDIA_TYPE = "text/csv"


def _day(name: str, value: str) -> date:
    try:
        return parse_day(value)
    except ValueError as error:
        raise InvalidInput(name, str(error)) from None


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
    def payouts(
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
        first, last = _day("from", from_day), _day("to", to_day)
        if first > last:
            raise InvalidInput("from", "must not be after `to`")
        with read_snapshot(database.engine) as connection:
            document = payout_report(
                connection,
                first,
                last,
                group_by,
                settings.time_zone,
                settings.gaming_day_start_hour,
            )
        if CSV_MEDIA_TYPE in request.headers.get("accept", ""):
            return Response(
                to_csv(document),  # type: ignore[arg-type]
                media_type=CSV_MEDIA_TYPE,
                headers={"Content-Disposition": 'attachment; filename="payouts.csv"'},
            )
        return Response(PayoutReportView.model_validate(document))

    @get("/unfinished", sync_to_thread=True, responses=problems(403))
    def unfinished(
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
