"""The casino's chart of accounts, as account specifications with no card vocabulary.

Codes are `<kind>:<owner>:<currency>` so that an account's meaning can be read from its
code in any report. Liabilities (money owed to players) and the house's result are
credit-normal; the cashier, the money physically held, is debit-normal. Every
deposit, stake and payout therefore keeps `cashier = wallets + held + house` per currency,
each side summed over its accounts (the house and the cashier have one per hash chain).
"""

from __future__ import annotations

from typing import Final

from ledger.model import AccountSpec, Side

HELD_PREFIX: Final = "held:"
"""What every held account's code begins with: a report finds them all by it."""


def wallet(player_id: str, currency: str) -> AccountSpec:
    """A player's available money: owed to the player, never below zero."""
    return AccountSpec(f"wallet:{player_id}:{currency}", currency, Side.CREDIT, min_balance=0)


def held(player_id: str, currency: str) -> AccountSpec:
    """Money held for the player's wagers in play; one per player so there is no hot row."""
    return AccountSpec(f"{HELD_PREFIX}{player_id}:{currency}", currency, Side.CREDIT, min_balance=0)


def house(currency: str, chain: int = 1) -> AccountSpec:
    """The house's result on one hash chain: credited when it wins, debited when it pays;
    no limit.

    One account per chain (ledger.chains), because every hand moves the house's money: a
    single house row would serialise every hand however the chains are split. The house's
    result is the sum over its chains.
    """
    return AccountSpec(_per_chain("house", currency, chain), currency, Side.CREDIT)


def cashier(currency: str, chain: int = 1) -> AccountSpec:
    """Money that entered (deposits) minus money that left (withdrawals), on one hash chain.

    One account per chain, like the house's: a deposit locks the cashier row until it
    commits, so with one `cashier:<currency>` every deposit and withdrawal of every player
    would wait for the one before. A player's cashier moves post on the player's chain,
    against that chain's account; the cashier's position is the sum over its chains.
    """
    return AccountSpec(_per_chain("cashier", currency, chain), currency, Side.DEBIT)


def _per_chain(kind: str, currency: str, chain: int) -> str:
    """`<kind>:<currency>` on chain 1 (the code from before there were chains, so an older
    ledger reads the same), `<kind>:<chain>:<currency>` on the others."""
    return f"{kind}:{currency}" if chain == 1 else f"{kind}:{chain}:{currency}"
