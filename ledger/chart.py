"""The casino's chart of accounts, as account specifications with no card vocabulary.

Codes are `<kind>:<owner>:<currency>` so that an account's meaning can be read from its
code in any report. Liabilities (money owed to players) and the house's result are
credit-normal; the cashier, the money physically held, is debit-normal. Every
deposit, stake and payout therefore keeps `cashier = wallets + held + house` per currency.
"""

from __future__ import annotations

from ledger.model import AccountSpec, Side


def wallet(player_id: str, currency: str) -> AccountSpec:
    """A player's available money: owed to the player, never below zero."""
    return AccountSpec(f"wallet:{player_id}:{currency}", currency, Side.CREDIT, min_balance=0)


def held(player_id: str, currency: str) -> AccountSpec:
    """Money held for the player's wagers in play; one per player so there is no hot row."""
    return AccountSpec(f"held:{player_id}:{currency}", currency, Side.CREDIT, min_balance=0)


def house(currency: str, chain: int = 1) -> AccountSpec:
    """The house's result on one hash chain: credited when it wins, debited when it pays;
    no limit.

    One account per chain (ledger.chains), because every hand moves the house's money: a
    single house row would serialise every hand however the chains are split. The house's
    result is the sum over its chains. Chain 1's keeps the code it had when there was one
    chain, `house:<currency>`; chain n's is `house:<n>:<currency>`.
    """
    code = f"house:{currency}" if chain == 1 else f"house:{chain}:{currency}"
    return AccountSpec(code, currency, Side.CREDIT)


def cashier(currency: str) -> AccountSpec:
    """Money that entered (deposits) minus money that left (withdrawals)."""
    return AccountSpec(f"cashier:{currency}", currency, Side.DEBIT)
