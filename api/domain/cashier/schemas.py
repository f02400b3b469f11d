"""Deposits and withdrawals: request and response bodies."""

from api.http.schemas import Currency, Id, PositiveAmount, RequestBody, ResponseBody


class CashierRequest(RequestBody):
    player_id: Id
    amount: PositiveAmount
    currency: Currency


class CashierReceipt(ResponseBody):
    transaction_id: int
    player_id: int
    amount: int
    currency: str
    balance_after: int
