"""The chart of accounts: codes a report can read, held accounts found by their prefix."""

from ledger import chart


def test_a_held_account_code_names_the_player_and_the_currency() -> None:
    assert chart.held("7", "USD").code == "held:7:USD"


def test_every_held_account_code_begins_with_the_held_prefix() -> None:
    assert chart.held("7", "EUR").code.startswith(chart.HELD_PREFIX)
    assert not chart.wallet("7", "EUR").code.startswith(chart.HELD_PREFIX)
