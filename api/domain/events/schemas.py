"""Significant events as auditors and operators read them."""

from datetime import datetime
from typing import Any

from api.http.schemas import ResponseBody


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
