"""A hand's money as ledger transactions.

Money flow, each step one balanced ledger transaction referencing the hand
(`ledger.reference`): stake (wallet -> held), raise on war (wallet -> held), settlement (held
-> house for everything staked, house -> wallet for everything returned).
"""

from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy.orm import Session

from api.db.models import HandRecord
from api.domain.hands.ledger import reference
from casino.hand import Hand
from ledger import chart
from ledger.chains import chain_for
from ledger.errors import LedgerError
from ledger.model import AccountSpec, TransactionRequest, Transfer
from ledger.posting import lock_accounts, open_account, post_all

Movement = tuple[AccountSpec, AccountSpec, int]  # debit, credit, amount


@dataclass(frozen=True, slots=True)
class HandAccounts:
    """The accounts a player's hands move, and the ledger chain they are posted on.

    The chain is the player's (`chain_for`), and the house account that chain's: two hands
    of different players mostly share neither, so neither row makes them wait for each other.
    """

    wallet: AccountSpec
    held: AccountSpec
    house: AccountSpec
    chain: int

    @classmethod
    def of(cls, player_id: int, currency: str) -> "HandAccounts":
        key = str(player_id)
        chain = chain_for(key)
        return cls(
            chart.wallet(key, currency),
            chart.held(key, currency),
            chart.house(currency, chain),
            chain,
        )

    def lock_player_accounts(self, session: Session) -> int:
        """Lock the player's own accounts and return the wallet's balance.

        The locked balance makes re-reading the wallet unnecessary. The house account is
        deliberately not locked here: every hand on the chain touches it, so holding it
        from the deal to the commit would serialise them; `post_all` locks it only for the
        posting, in account-id order like every other posting. Accounts are opened on a
        player's first hand in a currency; afterwards this is one query.
        """
        codes = [self.wallet.code, self.held.code]
        locked = lock_accounts(session, codes)
        if len(locked) < len(codes):
            for spec in (self.wallet, self.held, self.house):
                open_account(session, spec)
            locked = lock_accounts(session, codes)
        return locked[self.wallet.code]


def step(
    record: HandRecord, kind: str, movements: Sequence[Movement], **metadata: str
) -> TransactionRequest:
    """One step of the hand as a ledger transaction; a zero movement (nothing returned on a
    loss) is left out.

    The metadata is covered by the ledger's hash chain, so the audit can hold the hand record
    to it (who played, at which table, and who decided).
    """
    hand_reference = reference(record.id)
    return TransactionRequest(
        kind=kind,
        idempotency_key=f"{hand_reference}:{kind}",
        transfers=tuple(
            Transfer(debit=debit.code, credit=credit.code, amount=amount)
            for debit, credit, amount in movements
            if amount > 0
        ),
        reference=hand_reference,
        metadata={"player_id": record.player_id, "table_id": record.table_id, **metadata},
    )


def stake(record: HandRecord, accounts: HandAccounts) -> TransactionRequest:
    return step(record, "stake", [(accounts.wallet, accounts.held, record.bet + record.tie_bet)])


def raise_for_war(record: HandRecord, hand: Hand, accounts: HandAccounts) -> TransactionRequest:
    return step(record, "raise", [(accounts.wallet, accounts.held, hand.raise_amount)])


def settlement(
    record: HandRecord, hand: Hand, accounts: HandAccounts, decided_by: str | None = None
) -> TransactionRequest:
    """Everything staked goes to the house; everything returned comes back to the wallet."""
    assert hand.total_returned is not None
    decision = (
        {"decision": hand.decision.value, "decided_by": decided_by}
        if hand.decision is not None and decided_by is not None
        else {}
    )
    return step(
        record,
        "settlement",
        [
            (accounts.held, accounts.house, hand.total_staked),
            (accounts.house, accounts.wallet, hand.total_returned),
        ],
        **decision,
    )


def post(
    session: Session,
    record: HandRecord,
    accounts: HandAccounts,
    steps: Sequence[TransactionRequest],
) -> None:
    """Post the steps of one request (stake and settlement, or raise and settlement) as one
    batch on the player's chain: each its own ledger transaction, sharing the ledger's
    round trips."""
    if any(posted.replayed for posted in post_all(session, steps, chain=accounts.chain)):
        # A hand's keys are new by construction: money must have moved now.
        raise LedgerError(f"hand {record.id} was already posted")
