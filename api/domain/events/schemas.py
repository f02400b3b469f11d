"""Significant events as auditors and operators read them."""

from datetime import datetime
from enum import StrEnum
from typing import Any

from api.domain.events.service import EVENT_TYPES
from api.http.schemas import ResponseBody

EventKind = StrEnum(  # type: ignore[misc]
    "EventKind", {event_type: event_type for event_type in EVENT_TYPES}
)
"""The event types, a named enum for the `type` filter."""


class EventActor(ResponseBody):
    token_id: int
    role: str
    name: str | None


class EventView(ResponseBody):
    id: int
    seq: int
    at: datetime
    type: str
    actor: EventActor | None
    player_id: int | None
    subject: dict[str, Any]
    details: dict[str, Any]
    hash: str


class EventPage(ResponseBody):
    items: list[EventView]
    next_cursor: str | None
