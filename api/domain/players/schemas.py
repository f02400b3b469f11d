"""Players and their wallets: request and response bodies."""

from pydantic import Field

from api.http.schemas import Name, Reference, RequestBody, ResponseBody


class PlayerCreate(RequestBody):
    display_name: Name | None = None
    external_ref: Reference | None = None


SHOWN_ONCE = (
    "The bearer token, shown only in this response: only its hash is stored, so an "
    "idempotent replay returns null (issue another with POST /v1/players/{id}/tokens)."
)


class PlayerCreated(ResponseBody):
    SECRET_FIELDS = frozenset({"token"})

    id: int
    display_name: str | None
    external_ref: str | None
    token: str | None = Field(description=SHOWN_ONCE)


class PlayerToken(ResponseBody):
    SECRET_FIELDS = frozenset({"token"})

    player_id: int
    token: str | None = Field(description=SHOWN_ONCE)


class Balance(ResponseBody):
    currency: str
    available: int
    held: int = Field(description="Staked on a hand that awaits the player's decision.")


class PlayerView(ResponseBody):
    id: int
    display_name: str | None
    balances: list[Balance]
