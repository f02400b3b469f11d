"""Players' money history from the ledger: request parameters and response bodies."""

from datetime import date, datetime
from typing import Literal

from pydantic import Field

from api.http.schemas import ResponseBody


class WalletTransactionView(ResponseBody):
    transaction_id: int
    at: datetime
    kind: Literal["deposit", "withdrawal", "stake", "raise", "settlement"]
    currency: str
    amount: int = Field(description="Signed, as the wallet saw it: + in, - out, 0 none.")
    balance_after: int = Field(description="The wallet's balance after this transaction.")
    hand_id: int | None


class WalletTransactionPage(ResponseBody):
    items: list[WalletTransactionView]
    next_cursor: str | None


class StatementLineView(ResponseBody):
    currency: str
    opening_balance: int
    deposits: int
    withdrawals: int
    staked: int
    returned: int
    closing_balance: int
    hands: int


class StatementView(ResponseBody):
    """opening + deposits - withdrawals - staked + returned = closing, per currency."""

    player_id: int
    from_day: date = Field(alias="from")
    to_day: date = Field(alias="to")
    time_zone: str
    currencies: list[StatementLineView]


class PlayerAccountRow(StatementLineView):
    player_id: int


class PlayerAccountsView(ResponseBody):
    day: date
    time_zone: str
    generated_at: datetime
    rows: list[PlayerAccountRow]
