"""A hand's money as ledger transactions.

Money flow, each step one balanced ledger transaction referencing the hand
(`ledger.reference`): stake (wallet -> held), raise on war (wallet -> held), settlement (held
-> house for everything staked, house -> wallet for everything returned).
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache

import msgspec

from api.domain.hands.ledger import reference
from casino.hand import Hand
from ledger import chart
from ledger.chains import chain_for
from ledger.driver import Driver
from ledger.fresh import AccountRow, LockedChain, post_new
from ledger.model import AccountSpec, TransactionRequest, Transfer

Movement = tuple[AccountSpec, AccountSpec, int]  # debit, credit, amount


class HandRef(msgspec.Struct, frozen=True):
    """What every step of a hand names: the hand, its player and its table."""

    hand_id: int
    player_id: int
    table_id: int
    actor_token_id: int | None = None  # the token that asked; None: the house (a timeout)


@dataclass(frozen=True, slots=True)
class HandAccounts:
    """The accounts a player's hands move, and the ledger chain they are posted on.

    The chain is the player's (`chain_for`), and the house account that chain's: two hands
    of different players mostly share neither, so neither row makes them wait for each other.
    The player's own accounts need no row lock: every request that moves them holds the
    player's row first (`api.domain.players.turn`).
    """

    wallet: AccountSpec
    held: AccountSpec
    house: AccountSpec
    chain: int

    @classmethod
    def of(cls, player_id: int, currency: str) -> "HandAccounts":
        return _hand_accounts(player_id, currency)

    def specs(self) -> tuple[AccountSpec, ...]:
        return (self.wallet, self.held, self.house)


@lru_cache(maxsize=4096)
def _hand_accounts(player_id: int, currency: str) -> HandAccounts:
    """Worked out once per player and currency while the player plays: every hand and
    decision needs them, and they are values that never change."""
    key = str(player_id)
    chain = chain_for(key)
    return HandAccounts(
        chart.wallet(key, currency), chart.held(key, currency), chart.house(currency, chain), chain
    )


def step(
    hand: HandRef, kind: str, movements: Sequence[Movement], **metadata: str | int
) -> TransactionRequest:
    """One step of the hand as a ledger transaction; a zero movement (nothing returned on a
    loss) is left out.

    The metadata is covered by the ledger's hash chain, so the audit can hold the hand record
    to it (who played, at which table, who decided, and the token that asked).
    """
    actor = {} if hand.actor_token_id is None else {"actor_token_id": hand.actor_token_id}
    hand_reference = reference(hand.hand_id)
    return TransactionRequest(
        kind=kind,
        idempotency_key=f"{hand_reference}:{kind}",
        transfers=tuple(
            Transfer(debit=debit.code, credit=credit.code, amount=amount)
            for debit, credit, amount in movements
            if amount > 0
        ),
        reference=hand_reference,
        metadata={"player_id": hand.player_id, "table_id": hand.table_id, **actor, **metadata},
    )


def stake(ref: HandRef, hand: Hand, accounts: HandAccounts) -> TransactionRequest:
    return step(ref, "stake", [(accounts.wallet, accounts.held, hand.bet + hand.tie_bet)])


def raise_for_war(ref: HandRef, hand: Hand, accounts: HandAccounts) -> TransactionRequest:
    return step(ref, "raise", [(accounts.wallet, accounts.held, hand.raise_amount)])


def settlement(
    ref: HandRef, hand: Hand, accounts: HandAccounts, decided_by: str | None = None
) -> TransactionRequest:
    """Everything staked goes to the house; everything returned comes back to the wallet."""
    assert hand.total_returned is not None
    decision = (
        {"decision": hand.decision.value, "decided_by": decided_by}
        if hand.decision is not None and decided_by is not None
        else {}
    )
    return step(
        ref,
        "settlement",
        [
            (accounts.held, accounts.house, hand.total_staked),
            (accounts.house, accounts.wallet, hand.total_returned),
        ],
        **decision,
    )


def post(
    driver: Driver,
    accounts: HandAccounts,
    rows: Mapping[str, AccountRow],
    steps: Sequence[TransactionRequest],
    *,
    posted_at: datetime,
    locked: LockedChain | None = None,
) -> None:
    """Post the steps of one request (stake and settlement, or raise and settlement) as one
    batch on the player's chain: each its own ledger transaction, sharing the statements.
    A hand's keys are new by construction (its id is), so nothing is looked up to replay.
    `locked`: the chain's locks, where the hand's opening read took them."""
    post_new(driver, steps, rows, chain=accounts.chain, posted_at=posted_at, locked=locked)
