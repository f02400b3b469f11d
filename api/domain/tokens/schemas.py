"""Tokens as staff see them: never the secret."""

from datetime import datetime
from typing import Literal

from api.http.schemas import ResponseBody


class TokenView(ResponseBody):
    id: int
    role: Literal["operator", "auditor", "player"]
    name: str | None
    player_id: int | None
    issued_by: int | None
    created_at: datetime
    expires_at: datetime | None
    revoked_at: datetime | None
    last_used_at: datetime | None


class TokenPage(ResponseBody):
    items: list[TokenView]
    next_cursor: str | None
