"""The significant-events log (auditors and operators)."""

from datetime import datetime
from typing import Annotated

from litestar import Controller, get
from litestar.params import QueryParameter

from api.domain.events import service as events
from api.domain.events.schemas import EventKind, EventPage
from api.domain.tokens.service import Role
from api.http.routing import (
    BEARER,
    Cursor,
    DatabaseDependency,
    Limit,
    PrincipalDependency,
    QueryId,
    problems,
    query_instant,
)
from api.pagination import DEFAULT_LIMIT

EventTypeName = Annotated[
    EventKind | None, QueryParameter(name="type", description="Only this type.")
]


class EventController(Controller):
    path = "/v1/events"
    tags = ("events",)
    security = BEARER

    @get("/", sync_to_thread=True, responses=problems(403))
    def list_events(
        self,
        database: DatabaseDependency,
        principal: PrincipalDependency,
        event_type: EventTypeName = None,
        player_id: QueryId = None,
        token_id: QueryId = None,
        from_time: Annotated[
            datetime | None, QueryParameter(name="from", description="From this instant.")
        ] = None,
        to_time: Annotated[
            datetime | None, QueryParameter(name="to", description="Before this instant.")
        ] = None,
        limit: Limit = DEFAULT_LIMIT,
        cursor: Cursor = None,
    ) -> EventPage:
        """Who did what to whom, oldest first, each a link of the events' hash chain."""
        principal.require(Role.AUDITOR, Role.OPERATOR)
        kind = None if event_type is None else event_type.value
        since, until = query_instant("from", from_time), query_instant("to", to_time)
        filters = events.EventFilters(kind, player_id, token_id, since, until)
        with database.reading() as session:
            return EventPage.model_validate(events.list_events(session, filters, cursor, limit))
