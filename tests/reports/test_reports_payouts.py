"""The payout report: pure aggregation, its invariants, and the endpoint and command."""

import csv
import io
import json
from dataclasses import replace
from datetime import UTC, date, datetime
from fractions import Fraction
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from freezegun import freeze_time
from hypothesis import given
from hypothesis import strategies as st

from api.cli import main
from api.db.database import Database
from api.domain.reports.aggregate import SettledHand, aggregate
from api.domain.reports.theoretical import odds_for_rules
from casino.rules import TableRules
from tests.audit.support import Caller, execute, new_player, play_settled, play_tie, use_database
from tests.reports.conftest import START_HOUR, ZONE

RULES = json.dumps(TableRules().as_dict())
NEW_YORK = ZoneInfo(ZONE)


def _hand(
    hand_id: int = 1,
    *,
    outcome: str = "player_win",
    bet: int = 100,
    tie_bet: int = 0,
    raise_amount: int = 0,
    net: int = 100,
    day: date = date(2026, 6, 1),
    table_id: int = 1,
    player_id: int = 1,
    currency: str = "USD",
) -> SettledHand:
    staked = bet + tie_bet + raise_amount
    return SettledHand(
        hand_id=hand_id,
        day=day,
        table_id=table_id,
        player_id=player_id,
        currency=currency,
        rules=RULES,
        bet=bet,
        tie_bet=tie_bet,
        raise_amount=raise_amount,
        total_staked=staked,
        total_returned=staked + net,
        net=net,
        outcome=outcome,
        ledger_staked=staked,
        ledger_returned=staked + net,
    )


def test_rows_count_handle_returns_ties_wars_and_surrenders() -> None:
    hands = [
        _hand(1, outcome="player_win", net=100),
        _hand(2, outcome="dealer_win", tie_bet=10, net=-110),
        _hand(3, outcome="surrender", tie_bet=10, net=-50 + 100),
        _hand(4, outcome="war_loss", raise_amount=100, net=-200),
        _hand(5, outcome="war_win", raise_amount=100, net=100, day=date(2026, 6, 2)),
    ]
    report = aggregate(hands, "day")
    first, second = report.rows
    assert first.day == date(2026, 6, 1) and first.currency == "USD"
    assert (first.hands, first.handle, first.returned) == (4, 520, 360)
    assert first.house_win == 160
    assert first.hold == pytest.approx(160 / 520)
    assert (first.ties, first.wars, first.surrenders, first.tie_bets_won) == (
        2,
        1,
        1,
        1,
    )
    assert second.wars == 1
    (totals,) = report.totals
    assert totals.hands == 5 and totals.house_win == 160 - 100
    assert report.discrepancies.count == 0


def test_theoretical_win_uses_the_exact_edges_of_each_hands_recorded_rules() -> None:
    odds = odds_for_rules(RULES)
    hands = [
        _hand(1, bet=1000, tie_bet=100, outcome="dealer_win", net=-1100),
        _hand(2, bet=1000, outcome="surrender", net=-500),
    ]
    row = aggregate(hands, "table").rows[0]
    surrender_premium = (odds.house_edge_surrender - odds.house_edge_war) / odds.p_tie
    exact = 2000 * odds.house_edge_war + 1000 * surrender_premium
    exact += 100 * odds.house_edge_tie_bet
    assert row.table_id == 1
    assert row.theoretical_win == round(exact)
    assert row.theoretical_hold == pytest.approx(float(exact / Fraction(2100)))


def test_a_player_who_always_surrenders_is_rated_at_the_surrender_edge() -> None:
    """Of `denominator` hands, `numerator` tie (p_tie) and are surrendered: exactly so."""
    odds = odds_for_rules(RULES)
    ties, hands = odds.p_tie.numerator, odds.p_tie.denominator
    played = [
        _hand(n, bet=100, outcome="surrender" if n < ties else "dealer_win", net=-100)
        for n in range(hands)
    ]
    row = aggregate(played, "table").rows[0]
    assert row.theoretical_win == round(100 * hands * odds.house_edge_surrender)


def test_currencies_never_add_up() -> None:
    report = aggregate([_hand(1), _hand(2, currency="EUR")], "player")
    assert [(r.player_id, r.currency) for r in report.rows] == [(1, "EUR"), (1, "USD")]
    assert [t.currency for t in report.totals] == ["EUR", "USD"]


def test_ledger_figures_are_reported_and_disagreements_listed() -> None:
    tampered = replace(_hand(7, net=100), total_returned=999)
    missing = replace(_hand(8, net=-100, outcome="dealer_win"), ledger_returned=None)
    report = aggregate([tampered, missing], "day")
    assert report.rows[0].returned == 200 + 0  # the ledger's figures
    assert report.discrepancies.count == 2
    assert {(d.hand_id, d.field) for d in report.discrepancies.items} == {
        (7, "total_returned"),
        (8, "total_returned"),
    }


def test_hold_is_null_when_nothing_was_staked() -> None:
    empty = replace(_hand(1), ledger_staked=None, ledger_returned=None)
    row = aggregate([empty], "day").rows[0]
    assert row.handle == 0 and row.hold is None and row.theoretical_hold is None


_outcomes = st.sampled_from(
    ["player_win", "dealer_win", "surrender", "war_win", "war_tie", "war_loss"]
)


@st.composite
def settled_hands(draw: st.DrawFn) -> SettledHand:
    outcome = draw(_outcomes)
    bet = draw(st.integers(1, 5000)) * 2
    tie_bet = draw(st.integers(0, 1000))
    raise_amount = bet if outcome.startswith("war") else 0
    tied = outcome in ("surrender", "war_win", "war_tie", "war_loss")
    main = {
        "player_win": bet,
        "dealer_win": -bet,
        "surrender": -bet // 2,
        "war_win": bet,
        "war_tie": bet,
        "war_loss": -2 * bet,
    }[outcome]
    net = main + (10 * tie_bet if tied else -tie_bet)
    return _hand(
        draw(st.integers(1, 10**6)),
        outcome=outcome,
        bet=bet,
        tie_bet=tie_bet,
        raise_amount=raise_amount,
        net=net,
        day=draw(st.dates(date(2026, 1, 1), date(2026, 1, 5))),
        table_id=draw(st.integers(1, 3)),
        player_id=draw(st.integers(1, 4)),
    )


@given(
    hands=st.lists(settled_hands(), max_size=40),
    group_by=st.sampled_from(["day", "table", "player"]),
)
def test_house_win_is_minus_the_players_net_and_handle_is_everything_staked(
    hands: list[SettledHand], group_by: Any
) -> None:
    report = aggregate(hands, group_by)
    assert sum(r.house_win for r in report.rows) == -sum(h.net for h in hands)
    assert sum(r.handle for r in report.rows) == sum(h.total_staked for h in hands)
    assert sum(r.hands for r in report.rows) == len(hands)
    for total in report.totals:
        assert total.house_win == -sum(h.net for h in hands if h.currency == total.currency)


# Against a database ------------------------------------------------------------------


def _settle_at(database: Database, player: int, local: datetime, **kwargs: Any) -> Any:
    with freeze_time(local.astimezone(UTC)):
        return play_settled(database, player, **kwargs)


def test_gaming_day_boundary_at_the_start_hour(database: Database, operator: Caller) -> None:
    player = new_player(database)
    early = _settle_at(database, player, datetime(2026, 6, 10, 5, 59, tzinfo=NEW_YORK))
    on_time = _settle_at(database, player, datetime(2026, 6, 10, 6, 0, tzinfo=NEW_YORK))
    response = operator.get("/v1/reports/payouts", **{"from": "2026-06-09", "to": "2026-06-10"})
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["gaming_day"]["timezone"] == ZONE and body["gaming_day"]["start_hour"] == 6
    by_day = {row["day"]: row for row in body["rows"]}
    assert by_day["2026-06-09"]["hands"] == 1
    assert by_day["2026-06-10"]["hands"] == 1
    assert by_day["2026-06-09"]["house_win"] == -early.net
    assert by_day["2026-06-10"]["house_win"] == -on_time.net
    assert body["discrepancies"] == {"count": 0, "items": []}
    only_10th = operator.get("/v1/reports/payouts", **{"from": "2026-06-10", "to": "2026-06-10"})
    assert [r["day"] for r in only_10th.json()["rows"]] == ["2026-06-10"]


def test_a_23_hour_gaming_day_across_the_spring_change(
    database: Database, operator: Caller
) -> None:
    player = new_player(database)
    # 06:30 EST on 7 March and 05:30 EDT on 8 March: both in gaming day 7 March (23 h long).
    _settle_at(database, player, datetime(2026, 3, 7, 6, 30, tzinfo=NEW_YORK))
    _settle_at(database, player, datetime(2026, 3, 8, 5, 30, tzinfo=NEW_YORK))
    _settle_at(database, player, datetime(2026, 3, 8, 6, 0, tzinfo=NEW_YORK))
    body = operator.get("/v1/reports/payouts", **{"from": "2026-03-07", "to": "2026-03-08"}).json()
    assert [(r["day"], r["hands"]) for r in body["rows"]] == [("2026-03-07", 2), ("2026-03-08", 1)]
    window = body["gaming_day"]
    span = datetime.fromisoformat(window["utc_end"]) - datetime.fromisoformat(window["utc_start"])
    assert span.total_seconds() == (23 + 24) * 3600


def test_a_25_hour_gaming_day_across_the_autumn_change(
    database: Database, operator: Caller
) -> None:
    player = new_player(database)
    _settle_at(database, player, datetime(2026, 10, 31, 6, 0, tzinfo=NEW_YORK))
    _settle_at(database, player, datetime(2026, 11, 1, 5, 59, tzinfo=NEW_YORK))
    body = operator.get("/v1/reports/payouts", **{"from": "2026-10-31", "to": "2026-10-31"}).json()
    assert [(r["day"], r["hands"]) for r in body["rows"]] == [("2026-10-31", 2)]


def test_csv_with_accept_text_csv(database: Database, operator: Caller) -> None:
    player = new_player(database)
    for minute in range(5):
        _settle_at(database, player, datetime(2026, 6, 10, 12, minute, tzinfo=NEW_YORK))
    response = operator.get(
        "/v1/reports/payouts",
        accept="text/csv",
        **{"from": "2026-06-10", "to": "2026-06-10", "group_by": "player"},
    )
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/csv")
    table = [line for line in io.StringIO(response.text) if not line.startswith("#")]
    rows = list(csv.DictReader(table))
    assert [r["player_id"] for r in rows] == [str(player), "TOTAL"]
    assert rows[0]["hands"] == "5" and rows[0]["house_win"] == rows[1]["house_win"]


def test_reports_refuse_bad_input_and_other_roles(operator: Caller, auditor: Caller) -> None:
    for params in (
        {"from": "2026-13-01", "to": "2026-06-10"},
        {"from": "yesterday", "to": "2026-06-10"},
        {"from": "2026-06-11", "to": "2026-06-10"},
        {"from": "2026-06-10", "to": "2026-06-10", "group_by": "week"},
        {"from": "2026-06-10", "to": "9999-12-31"},
        {"from": "0001-01-01", "to": "2026-06-10"},
    ):
        response = operator.get("/v1/reports/payouts", **params)
        assert response.status_code == 422, params
        assert response.json()["code"] == "validation_error"
    assert operator.get("/v1/reports/payouts", to="2026-06-10").status_code == 422
    assert (
        auditor.get("/v1/reports/payouts", **{"from": "2026-06-10", "to": "2026-06-10"}).status_code
        == 403
    )


def test_a_tampered_hand_record_shows_as_a_discrepancy_with_ledger_money_reported(
    database: Database, operator: Caller
) -> None:
    player = new_player(database)
    hand = _settle_at(database, player, datetime(2026, 6, 10, 12, tzinfo=NEW_YORK))
    execute(
        database.engine,
        "UPDATE hands SET total_returned = total_returned + 7 WHERE id = :id",
        id=hand.id,
    )
    body = operator.get("/v1/reports/payouts", **{"from": "2026-06-10", "to": "2026-06-10"}).json()
    assert body["discrepancies"]["count"] == 1
    assert body["discrepancies"]["items"][0]["hand_id"] == hand.id
    assert body["rows"][0]["house_win"] == -hand.net  # from the ledger, untouched


def test_war_hands_count_their_raise_in_the_handle(database: Database, operator: Caller) -> None:
    player = new_player(database)
    with freeze_time(datetime(2026, 6, 10, 16, tzinfo=UTC)):
        tie = play_tie(database, player, tie_bet=100)
        from tests.audit.support import decide

        war = decide(database, tie.id, player, "war")
    body = operator.get("/v1/reports/payouts", **{"from": "2026-06-10", "to": "2026-06-10"}).json()
    (row,) = [r for r in body["rows"] if r["wars"] == 1] or body["rows"]
    assert row["wars"] == 1 and row["ties"] == 1 and row["tie_bets_won"] == 1
    assert body["totals"][0]["handle"] >= war.total_staked


def test_cli_report_in_every_format(
    database: Database,
    database_url: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    player = new_player(database)
    hand = _settle_at(database, player, datetime(2026, 6, 10, 12, tzinfo=NEW_YORK))
    use_database(
        monkeypatch, database_url, gaming_day_timezone=ZONE, gaming_day_start_hour=str(START_HOUR)
    )
    args = ["report", "payouts", "--from", "2026-06-10", "--to", "2026-06-10"]
    assert main([*args, "--format", "json", "--group-by", "table"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["rows"][0]["house_win"] == -hand.net
    assert document["rows"][0]["table_id"] == hand.table_id
    assert main([*args, "--format", "csv"]) == 0
    table = [line for line in capsys.readouterr().out.splitlines() if not line.startswith("#")]
    assert table[0].startswith("day,currency,hands,handle")
    monkeypatch.setenv("COLUMNS", "80")
    assert main(args) == 0
    text = capsys.readouterr().out
    assert "TOTAL" in text
    assert max(len(line) for line in text.splitlines()) <= 80  # an 80-column terminal
    assert main(["report", "payouts", "--from", "2026-06-11", "--to", "2026-06-10"]) == 2
    assert main(["report", "payouts", "--from", "2026-06-10", "--to", "9999-12-31"]) == 2
    assert main(["audit", "--to", "9999-12-31"]) == 2


def test_cli_json_is_the_api_body(
    database: Database,
    database_url: str,
    operator: Caller,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    player = new_player(database)
    _settle_at(database, player, datetime(2026, 6, 10, 12, tzinfo=NEW_YORK))
    use_database(
        monkeypatch, database_url, gaming_day_timezone=ZONE, gaming_day_start_hour=str(START_HOUR)
    )
    api = operator.get(
        "/v1/reports/payouts", **{"from": "2026-06-10", "to": "2026-06-10", "group_by": "table"}
    ).json()
    args = ["--from", "2026-06-10", "--to", "2026-06-10", "--group-by", "table"]
    assert main(["report", "payouts", *args, "--format", "json"]) == 0
    cli = json.loads(capsys.readouterr().out)
    for document in (api, cli):
        del document["header"]["generated_at"]
    assert cli == api


def test_each_row_carries_the_holds_standard_error_and_95_percent_interval(
    database: Database, operator: Caller
) -> None:
    player = new_player(database)
    for minute in range(6):
        _settle_at(database, player, datetime(2026, 6, 10, 12, minute, tzinfo=NEW_YORK))
    body = operator.get("/v1/reports/payouts", **{"from": "2026-06-10", "to": "2026-06-10"}).json()
    (row,) = body["rows"]
    low, high = row["hold_interval_95"]
    assert row["hold_std_error"] > 0 and low < row["theoretical_hold"] < high
    assert row["outside_interval"] == (not low <= row["hold"] <= high)
    assert body["no_activity"] is False
    assert body["header"]["filters"] == {
        "from": "2026-06-10",
        "to": "2026-06-10",
        "group_by": "day",
    }
    assert body["header"]["engine_version"] and body["header"]["software_version"]


def test_a_period_without_hands_says_so(operator: Caller) -> None:
    body = operator.get("/v1/reports/payouts", **{"from": "2026-01-01", "to": "2026-01-02"}).json()
    assert body["rows"] == [] and body["no_activity"] is True
    csv_text = operator.get(
        "/v1/reports/payouts",
        accept="text/csv",
        **{"from": "2026-01-01", "to": "2026-01-02"},
    ).text
    assert csv_text.splitlines()[0] == "# payout report"
    assert csv_text.splitlines()[-1].startswith("NO ACTIVITY")
