"""What the ledger says a hand staked and returned, from its transactions."""

from api.domain.hands.ledger import LedgerTxn
from api.domain.reports.settled import ledger_money

WALLET = "wallet:1:USD"


def _txn(kind: str, amounts: dict[str, int]) -> LedgerTxn:
    return LedgerTxn(id=1, seq=1, kind=kind, chain=1, amounts=amounts)


def test_staked_is_the_stake_and_the_raise_transferred() -> None:
    stake = _txn("stake", {WALLET: 1100, "house:USD": -1100})
    raise_ = _txn("raise", {WALLET: 1000, "house:USD": -1000})
    assert ledger_money([stake, raise_], WALLET)[0] == 2100


def test_returned_is_what_the_settlement_credited_to_the_wallet() -> None:
    settlement = _txn("settlement", {WALLET: -2000, "house:USD": 2000})
    assert ledger_money([settlement], WALLET)[1] == 2000


def test_a_lost_hand_returned_nothing_but_was_settled() -> None:
    settlement = _txn("settlement", {})
    assert ledger_money([settlement], WALLET) == (None, 0)


def test_no_transactions_are_no_figures() -> None:
    assert ledger_money([], WALLET) == (None, None)


def test_another_wallets_credit_is_not_this_hands_return() -> None:
    settlement = _txn("settlement", {"wallet:2:USD": -500, "house:USD": 500})
    assert ledger_money([settlement], WALLET) == (None, 0)
