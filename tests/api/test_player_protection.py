"""Limits, cooling-off, time-outs and self-exclusion through the real app on both
databases: every refusal moves nothing, and a tie awaiting a decision can always be decided.
"""

from datetime import UTC, datetime, timedelta
from typing import Any

from freezegun import freeze_time
from litestar.testing import TestClient
from sqlalchemy import text

from api.app import create_app
from api.domain.tokens.service import Role
from api.settings import Settings
from ledger.database import make_engine
from tests.api.conftest import (
    Caller,
    available,
    issue_test_token,
    new_player,
    play_until,
    standard_table_id,
)

DAY_ONE = datetime(2026, 7, 1, 12, tzinfo=UTC)


def _set(caller: Caller, *limits: dict[str, Any], path: str = "/v1/me/limits") -> Any:
    response = caller.post(path, {"limits": list(limits)})
    assert response.status_code == 200, response.text
    return response.json()


def _limit(view: dict[str, Any], kind: str) -> dict[str, Any]:
    (found,) = [limit for limit in view["limits"] if limit["kind"] == kind]
    return found  # type: ignore[no-any-return]


def _deposit(operator: Caller, player_id: int, amount: int) -> Any:
    return operator.post(
        "/v1/cashier/deposits", {"player_id": player_id, "amount": amount, "currency": "USD"}
    )


def _bet(player: Caller, bet: int = 100, tie_bet: int = 0) -> Any:
    table_id = standard_table_id(player)
    return player.post("/v1/hands", {"table_id": table_id, "bet": bet, "tie_bet": tie_bet})


def test_a_new_limit_is_in_force_at_once(operator: Caller) -> None:
    player, _ = new_player(operator)
    view = _set(player, {"kind": "deposit", "period": "day", "amount": 1_000})
    assert _limit(view, "deposit") == {
        "kind": "deposit",
        "period": "day",
        "currency": "USD",
        "amount": 1_000,
        "pending": None,
    }
    assert player.get("/v1/me/limits").json() == view


def test_a_deposit_past_the_daily_limit_is_refused_until_the_next_gaming_day(
    operator: Caller,
) -> None:
    with freeze_time(DAY_ONE) as clock:
        player, player_id = new_player(operator)
        _set(player, {"kind": "deposit", "period": "day", "amount": 1_000})
        assert _deposit(operator, player_id, 800).status_code == 201
        refused = _deposit(operator, player_id, 300)
        assert refused.status_code == 422
        assert refused.json()["code"] == "deposit_limit_exceeded"
        assert available(player) == 800
        clock.move_to(datetime(2026, 7, 1, 23, 59, tzinfo=UTC))
        assert _deposit(operator, player_id, 300).status_code == 422
        clock.move_to(datetime(2026, 7, 2, 0, 1, tzinfo=UTC))
        assert _deposit(operator, player_id, 300).status_code == 201


def test_raising_a_limit_waits_out_the_cooling_off_period(operator: Caller) -> None:
    with freeze_time(DAY_ONE) as clock:
        player, _ = new_player(operator)
        _set(player, {"kind": "wager", "period": "week", "amount": 1_000})
        raised = _limit(_set(player, {"kind": "wager", "period": "week", "amount": 5_000}), "wager")
        assert raised["amount"] == 1_000
        assert raised["pending"]["amount"] == 5_000
        assert raised["pending"]["effective_at"].startswith("2026-07-02T12:00:00")
        clock.tick(timedelta(hours=24, seconds=1))
        now = _limit(player.get("/v1/me/limits").json(), "wager")
        assert (now["amount"], now["pending"]) == (5_000, None)


def test_removing_a_limit_waits_too_and_lowering_overrides_a_pending_raise(
    operator: Caller,
) -> None:
    with freeze_time(DAY_ONE) as clock:
        player, _ = new_player(operator)
        _set(player, {"kind": "loss", "period": "month", "amount": 1_000})
        removed = _limit(_set(player, {"kind": "loss", "period": "month", "amount": None}), "loss")
        assert removed["amount"] == 1_000 and removed["pending"]["amount"] is None
        lowered = _limit(_set(player, {"kind": "loss", "period": "month", "amount": 500}), "loss")
        assert (lowered["amount"], lowered["pending"]) == (500, None)
        clock.tick(timedelta(days=2))
        assert _limit(player.get("/v1/me/limits").json(), "loss")["amount"] == 500


def test_a_hand_whose_worst_case_passes_the_loss_limit_is_refused(operator: Caller) -> None:
    player, _ = new_player(operator, deposit=10_000)
    _set(player, {"kind": "loss", "period": "day", "amount": 500})
    refused = _bet(player, bet=200, tie_bet=200)  # 200 + 200 + a 200 raise > 500
    assert refused.status_code == 422 and refused.json()["code"] == "loss_limit_exceeded"
    assert available(player) == 10_000
    assert _bet(player, bet=200, tie_bet=100).status_code == 201


def test_wager_and_single_bet_limits_refuse_a_hand(operator: Caller) -> None:
    player, _ = new_player(operator, deposit=10_000)
    _set(
        player,
        {"kind": "max_bet", "amount": 300},
        {"kind": "wager", "period": "day", "amount": 1_000},
    )
    too_big = _bet(player, bet=400)
    assert too_big.status_code == 422 and too_big.json()["code"] == "wager_limit_exceeded"
    assert available(player) == 10_000
    wagered = 0
    while wagered + 300 <= 1_000:
        hand = _bet(player, bet=300).json()
        if hand["status"] == "awaiting_decision":
            player.post(f"/v1/hands/{hand['id']}/decision", {"action": "surrender"})
        wagered += 300
    before = available(player)
    refused = _bet(player, bet=300)
    assert refused.status_code == 422 and refused.json()["code"] == "wager_limit_exceeded"
    assert available(player) == before


def test_play_stops_at_the_daily_time_limit(operator: Caller) -> None:
    with freeze_time(DAY_ONE) as clock:
        player, _ = new_player(operator, deposit=100_000)
        _set(player, {"kind": "play_time", "period": "day", "amount": 600})
        for _ in range(4):
            hand = _bet(player).json()
            if hand["status"] == "awaiting_decision":
                player.post(f"/v1/hands/{hand['id']}/decision", {"action": "surrender"})
            clock.tick(timedelta(minutes=4))  # each gap counts in full: under the idle gap
        before = available(player)
        refused = _bet(player)
        assert refused.status_code == 403 and refused.json()["code"] == "time_limit_reached"
        assert available(player) == before
        clock.move_to(datetime(2026, 7, 2, 0, 1, tzinfo=UTC))
        assert _bet(player).status_code == 201


def test_a_tie_awaiting_a_decision_can_always_be_decided(operator: Caller) -> None:
    player, player_id = new_player(operator, deposit=100_000)
    hand = play_until(player, standard_table_id(player), "awaiting_decision")
    _set(player, {"kind": "loss", "period": "day", "amount": 1})
    operator.post(f"/v1/players/{player_id}/exclusion", {"until": None})
    decided = player.post(f"/v1/hands/{hand['id']}/decision", {"action": "war"})
    assert decided.status_code == 200 and decided.json()["status"] == "settled"


def test_an_excluded_player_can_neither_play_nor_deposit_but_can_withdraw_and_read(
    operator: Caller,
) -> None:
    with freeze_time(DAY_ONE) as clock:
        player, player_id = new_player(operator, deposit=5_000)
        until = (DAY_ONE + timedelta(days=7)).isoformat()
        excluded = player.post("/v1/me/exclusion", {"until": until, "reason": "a break"})
        assert excluded.status_code == 201 and excluded.json()["excluded"] is True
        for refused in (_bet(player), _deposit(operator, player_id, 100)):
            assert refused.status_code == 403 and refused.json()["code"] == "self_excluded"
        withdrawn = operator.post(
            "/v1/cashier/withdrawals", {"player_id": player_id, "amount": 1_000, "currency": "USD"}
        )
        assert withdrawn.status_code == 201
        assert player.get("/v1/me/transactions").status_code == 200
        assert available(player) == 4_000
        clock.tick(timedelta(days=7, seconds=1))
        assert player.get("/v1/me/exclusion").json()["excluded"] is False
        assert _bet(player).status_code == 201


def test_an_exclusion_cannot_be_shortened_or_lifted(operator: Caller) -> None:
    player, player_id = new_player(operator)
    later = (datetime.now(UTC) + timedelta(days=30)).isoformat()
    sooner = (datetime.now(UTC) + timedelta(days=1)).isoformat()
    assert player.post("/v1/me/exclusion", {"until": later}).status_code == 201
    for attempt in (
        player.post("/v1/me/exclusion", {"until": sooner}),
        operator.post(f"/v1/players/{player_id}/exclusion", {"until": sooner}),
    ):
        assert attempt.status_code == 409 and attempt.json()["code"] == "exclusion_active"
    assert player.post("/v1/me/exclusion", {"until": None}).status_code == 201
    assert player.get("/v1/me/exclusion").json()["until"] is None


def test_an_exclusion_ending_outside_the_utc_calendar_is_refused_and_excludes_nobody(
    operator: Caller,
) -> None:
    player, _ = new_player(operator)
    refused = player.post("/v1/me/exclusion", {"until": "9999-12-31T23:00:00-05:00"})
    assert refused.status_code == 422 and refused.json()["code"] == "validation_error"
    assert player.get("/v1/me/exclusion").json()["excluded"] is False


def test_operators_set_a_players_limits_and_players_cannot_use_their_routes(
    operator: Caller, auditor: Caller
) -> None:
    player, player_id = new_player(operator)
    path = f"/v1/players/{player_id}/limits"
    view = _set(operator, {"kind": "deposit", "period": "week", "amount": 2_000}, path=path)
    assert _limit(view, "deposit")["amount"] == 2_000
    assert auditor.get(path).json() == player.get("/v1/me/limits").json()
    assert player.post(path, {"limits": [{"kind": "max_bet", "amount": 1}]}).status_code == 403
    assert operator.get("/v1/players/999999/limits").status_code == 404


def test_invalid_limits_are_refused_naming_the_field(player: Caller) -> None:
    for body, field in (
        ({"kind": "deposit", "amount": 100}, "period"),
        ({"kind": "max_bet", "period": "day", "amount": 100}, "period"),
        ({"kind": "play_time", "period": "day", "amount": 100_000}, "amount"),
        ({"kind": "wager", "period": "year", "amount": 100}, "period"),
    ):
        response = player.post("/v1/me/limits", {"limits": [body]})
        assert response.status_code == 422, body
        assert field in response.text


def test_every_change_records_the_token_that_asked_for_it(
    operator: Caller, database_url: str
) -> None:
    player, player_id = new_player(operator)
    _set(player, {"kind": "max_bet", "amount": 500})
    _set(operator, {"kind": "max_bet", "amount": 400}, path=f"/v1/players/{player_id}/limits")
    engine = make_engine(database_url)
    try:
        with engine.connect() as connection:
            tokens = (
                connection.execute(
                    text("SELECT token_id FROM player_limits WHERE player_id = :p ORDER BY id"),
                    {"p": player_id},
                )
                .scalars()
                .all()
            )
    finally:
        engine.dispose()
    assert len(set(tokens)) == 2 and None not in tokens


def _surrendered_bet(player: Caller, bet: int) -> Any:
    """A bet whose hand ends now: a tie is surrendered, which stakes nothing more."""
    response = _bet(player, bet=bet)
    if response.status_code == 201 and response.json()["status"] == "awaiting_decision":
        player.post(f"/v1/hands/{response.json()['id']}/decision", {"action": "surrender"})
    return response


def test_a_weekly_wager_limit_runs_by_the_gaming_week_of_the_configured_zone(
    settings: Settings,
) -> None:
    new_york = settings.model_copy(update={"gaming_day_timezone": "America/New_York"})
    sunday_night = datetime(2026, 7, 6, 3, tzinfo=UTC)  # Sunday 23:00 in New York
    with TestClient(app=create_app(new_york)) as client, freeze_time(sunday_night) as clock:
        operator = Caller(client, issue_test_token(new_york, Role.OPERATOR))
        player, _ = new_player(operator, deposit=10_000)
        _set(player, {"kind": "wager", "period": "week", "amount": 250})
        assert _surrendered_bet(player, 100).status_code == 201
        assert _surrendered_bet(player, 100).status_code == 201
        before = available(player)
        refused = _bet(player, bet=100)
        assert refused.status_code == 422 and refused.json()["code"] == "wager_limit_exceeded"
        assert available(player) == before
        clock.move_to(datetime(2026, 7, 6, 4, 1, tzinfo=UTC))  # Monday 00:01 in New York
        assert _surrendered_bet(player, 100).status_code == 201


def test_the_policy_is_the_one_its_settings_give_copies_included(settings: Settings) -> None:
    assert settings.protection is settings.protection  # built once, not per hand
    quicker = settings.model_copy(update={"play_idle_gap_seconds": 5, "gaming_day_start_hour": 6})
    assert quicker.protection.idle_gap == timedelta(seconds=5)
    assert quicker.protection.start_hour == 6
    assert settings.protection.idle_gap == timedelta(seconds=settings.play_idle_gap_seconds)
