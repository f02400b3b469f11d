"""The hot path (`api.http.hot_path`) answers exactly as the framework does, and only takes
the requests the framework would accept as they are."""

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest
from freezegun import freeze_time
from litestar import Litestar
from litestar.testing import TestClient
from litestar.types import ASGIApp, Receive, Scope, Send

from api.app import HOT_COMMANDS, create_app
from api.domain.tokens.service import Role
from api.http.hot_path import hot_path
from api.settings import Settings
from tests.api.conftest import Caller, issue_test_token, new_player, standard_table_id

MOMENT = datetime(2026, 11, 25, 12, 0, tzinfo=UTC)
Exchange = tuple[int, list[tuple[str, str]], bytes]


def _exchange(response: httpx.Response) -> Exchange:
    """What a client receives, but for the request id (fresh for every request)."""
    headers = [(k, v) for k, v in response.headers.multi_items() if k != "x-request-id"]
    return response.status_code, headers, response.content


class Recording:
    """The framework's side, noting the paths of the POSTs that reach it."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self.posted: list[str] = []

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope.get("method") == "POST":
            self.posted.append(scope["path"])
        await self.app(scope, receive, send)


def with_recorded_framework(app: Litestar) -> Recording:
    """Puts the hot path in front of `app` (made without it) and returns the framework's
    side, which notes the POSTs that reach it."""
    framework = Recording(app.asgi_handler)
    app.asgi_handler = hot_path(framework, HOT_COMMANDS, app.state)
    return framework


class Twins:
    """The same requests sent to two apps on two databases that started out the same: one
    with the hot path, one without."""

    def __init__(
        self, hot: TestClient[Litestar], passed_on: Recording, framework: TestClient[Litestar]
    ) -> None:
        self.hot = hot
        self.passed_on = passed_on
        self.framework = framework
        self._keys = 0

    def post(self, token: str, path: str, body: Any, *, key: str | None = None) -> Any:
        """Both answers, which must be the same bytes, the first served by the hot path;
        the JSON of the hot path's."""
        if key is None:
            self._keys += 1
            key = f"twin-{self._keys}"
        headers = {"Authorization": f"Bearer {token}", "Idempotency-Key": key}
        hot = self.hot.post(path, json=body, headers=headers)
        assert self.passed_on.posted == [], "the hot path passed the request on"
        framework = self.framework.post(path, json=body, headers=headers)
        assert _exchange(hot) == _exchange(framework)
        return hot.json()

    def warm(self, *tokens: str) -> None:
        """Each token known to both apps' authenticators, as it is after a first request."""
        for token in tokens:
            for client in (self.hot, self.framework):
                client.get("/v1/me", headers={"Authorization": f"Bearer {token}"})


@pytest.fixture
def set_up(settings: Settings) -> tuple[str, str, int]:
    """An operator, a funded player and the standard table, written through the app."""
    operator_token = issue_test_token(settings, Role.OPERATOR)
    with TestClient(app=create_app(settings)) as client:
        operator = Caller(client, operator_token)
        player, _ = new_player(operator, deposit=20_000)
        return operator_token, player.token, standard_table_id(operator)


@pytest.fixture
def twins(
    settings: Settings, set_up: tuple[str, str, int], clone_database: Callable[[], str]
) -> Iterator[Twins]:
    framework_url = clone_database()
    # Tokens stay in the authenticators' memory for the whole test, and their clock is the
    # real one: the look-up is a unit of work of its own, the check runs on the event loop.
    remembered: dict[str, Any] = {"token_cache_seconds": 3600, "hot_path": False}
    hot_app = create_app(settings.model_copy(update=remembered))
    passed_on = with_recorded_framework(hot_app)
    framework_app = create_app(Settings(database_url=framework_url, **remembered))
    with (
        freeze_time(MOMENT, ignore=["api.domain.tokens"]),
        TestClient(app=hot_app) as hot,
        TestClient(app=framework_app) as framework,
    ):
        twins = Twins(hot, passed_on, framework)
        twins.warm(*set_up[:2])
        passed_on.posted.clear()
        yield twins


def _play_until_tie(twins: Twins, player: str, table_id: int) -> dict[str, Any]:
    for _ in range(300):
        hand: dict[str, Any] = twins.post(player, "/v1/hands", {"table_id": table_id, "bet": 100})
        if hand["status"] == "awaiting_decision":
            return hand
    raise AssertionError("no tie in 300 hands")


def test_placed_and_decided_hands_are_answered_as_the_framework_answers_them(
    twins: Twins, set_up: tuple[str, str, int]
) -> None:
    _, player, table_id = set_up
    twins.post(player, "/v1/hands", {"table_id": table_id, "bet": 100, "tie_bet": 10})
    tie = _play_until_tie(twins, player, table_id)
    twins.post(player, f"/v1/hands/{tie['id']}/decision", {"action": "war"})
    tie = _play_until_tie(twins, player, table_id)
    twins.post(player, f"/v1/hands/{tie['id']}/decision", {"action": "surrender"})


def test_refusals_by_the_command_are_answered_as_the_framework_answers_them(
    twins: Twins, set_up: tuple[str, str, int]
) -> None:
    _, player, table_id = set_up
    assert twins.post(player, "/v1/hands", {"table_id": table_id, "bet": 10**9})["code"] == (
        "bet_out_of_range"
    )
    assert twins.post(player, "/v1/hands", {"table_id": 999, "bet": 100})["status"] == 404
    wrong = {"table_id": table_id, "bet": 100, "currency": "EUR"}
    assert twins.post(player, "/v1/hands", wrong)["code"] == "currency_mismatch"
    assert twins.post(player, "/v1/hands/999/decision", {"action": "war"})["status"] == 404
    tie = _play_until_tie(twins, player, table_id)
    refused = twins.post(player, "/v1/hands", {"table_id": table_id, "bet": 100})
    assert refused["status"] == 409
    decided = f"/v1/hands/{tie['id']}/decision"
    twins.post(player, decided, {"action": "surrender"})
    assert twins.post(player, decided, {"action": "war"})["code"] == "hand_not_awaiting_decision"


def test_replays_and_reused_keys_are_answered_as_the_framework_answers_them(
    twins: Twins, set_up: tuple[str, str, int]
) -> None:
    _, player, table_id = set_up
    body = {"table_id": table_id, "bet": 100}
    first = twins.post(player, "/v1/hands", body, key="same")
    assert twins.post(player, "/v1/hands", body, key="same") == first
    reused = twins.post(player, "/v1/hands", {**body, "bet": 200}, key="same")
    assert reused["code"] == "idempotency_key_reused"
    refusal = twins.post(player, "/v1/hands", {**body, "bet": 10**9}, key="refused")
    assert twins.post(player, "/v1/hands", {**body, "bet": 10**9}, key="refused") == refusal


def test_the_cashier_is_answered_as_the_framework_answers_it(
    twins: Twins, set_up: tuple[str, str, int]
) -> None:
    operator, player, _ = set_up
    player_id = twins.hot.get("/v1/me", headers={"Authorization": f"Bearer {player}"}).json()["id"]
    move = {"player_id": player_id, "amount": 500, "currency": "USD"}
    twins.post(operator, "/v1/cashier/deposits", move)
    twins.post(operator, "/v1/cashier/withdrawals", move)
    too_much = twins.post(operator, "/v1/cashier/withdrawals", {**move, "amount": 10**9})
    assert too_much["code"] == "insufficient_funds"
    assert twins.post(operator, "/v1/cashier/deposits", {**move, "player_id": 999})["status"] == 404


# Which requests take it -------------------------------------------------------------------


@pytest.fixture
def recording(settings: Settings) -> Iterator[tuple[Recording, TestClient[Litestar]]]:
    cors = ("https://front.example",)
    app = create_app(settings.model_copy(update={"hot_path": False, "cors_allowed_origins": cors}))
    framework = with_recorded_framework(app)
    with TestClient(app=app) as client:
        yield framework, client


@dataclass(frozen=True)
class Unseen:
    """A funded player whose token the authenticator has never looked up, their operator,
    and the standard table."""

    operator: Caller
    player: Caller
    player_id: int
    table_id: int


@pytest.fixture
def unseen(recording: tuple[Recording, TestClient[Litestar]], settings: Settings) -> Unseen:
    _, client = recording
    operator = Caller(client, issue_test_token(settings, Role.OPERATOR))
    player, player_id = new_player(operator, deposit=10_000)
    return Unseen(operator, player, player_id, standard_table_id(operator))


@pytest.fixture
def known_player(unseen: Unseen) -> tuple[Caller, int]:
    unseen.player.get("/v1/me")  # its token is in the authenticator's memory for a second
    return unseen.player, unseen.table_id


def test_a_request_the_framework_would_accept_never_reaches_it(
    recording: tuple[Recording, TestClient[Litestar]], known_player: tuple[Caller, int]
) -> None:
    framework, _ = recording
    player, table_id = known_player
    framework.posted.clear()
    assert player.post("/v1/hands", {"table_id": table_id, "bet": 100}).status_code == 201
    assert framework.posted == []


def test_a_caller_whose_token_is_not_in_memory_is_served_by_the_hot_path(
    recording: tuple[Recording, TestClient[Litestar]], unseen: Unseen
) -> None:
    framework, _ = recording
    framework.posted.clear()
    hand = {"table_id": unseen.table_id, "bet": 100}
    assert unseen.player.post("/v1/hands", hand).status_code == 201
    assert framework.posted == []


def test_a_revoked_token_not_in_memory_goes_to_the_framework_which_refuses_it(
    recording: tuple[Recording, TestClient[Litestar]], unseen: Unseen
) -> None:
    framework, _ = recording
    (token,) = unseen.operator.get("/v1/tokens", player_id=unseen.player_id).json()["items"]
    unseen.operator.post(f"/v1/tokens/{token['id']}/revoke")
    framework.posted.clear()
    refused = unseen.player.post("/v1/hands", {"table_id": unseen.table_id, "bet": 100})
    assert refused.status_code == 401 and refused.json()["code"] == "token_revoked"
    assert framework.posted == ["/v1/hands"]


def test_refused_tokens_count_against_the_address_as_the_framework_counts_them(
    recording: tuple[Recording, TestClient[Litestar]], known_player: tuple[Caller, int]
) -> None:
    """The hot path looks a refused token up without counting it; the framework, which the
    request then goes to, counts it once (the limit is 20 failures a minute)."""
    _, client = recording
    _, table_id = known_player
    intruder = Caller(client, "cw_guessing")
    statuses = [
        intruder.post("/v1/hands", {"table_id": table_id, "bet": 100}).status_code
        for _ in range(21)
    ]
    assert statuses == [401] * 20 + [429]


@pytest.mark.parametrize(
    ("request_", "status"),
    [
        pytest.param({"json": {"table_id": 1, "bet": "100"}}, 422, id="invalid-body"),
        pytest.param({"json": {"table_id": 1, "bet": 100, "x": 1}}, 422, id="unknown-field"),
        pytest.param({"content": b"{", "media": "application/json"}, 422, id="not-json"),
        pytest.param({"content": b"{}", "media": "text/plain"}, 415, id="not-json-media"),
        pytest.param({"key": None}, 400, id="no-key"),
        pytest.param({"key": "bad\x7fkey"}, 422, id="unprintable-key"),
        pytest.param({"token": "unknown"}, 401, id="unknown-token"),
        pytest.param({"query": "?x=1"}, 201, id="query-string"),
        pytest.param({"origin": "https://front.example"}, 201, id="cross-origin"),
    ],
)
def test_any_other_request_goes_to_the_framework_with_its_body(
    recording: tuple[Recording, TestClient[Litestar]],
    known_player: tuple[Caller, int],
    request_: dict[str, Any],
    status: int,
) -> None:
    framework, client = recording
    player, table_id = known_player
    framework.posted.clear()
    headers = httpx.Headers({"Authorization": f"Bearer {request_.get('token', player.token)}"})
    key = request_.get("key", "a-key")
    if key is not None:
        headers["Idempotency-Key"] = key
    if "media" in request_:
        headers["Content-Type"] = request_["media"]
    if "origin" in request_:
        headers["Origin"] = request_["origin"]
    body = request_.get("json", {"table_id": table_id, "bet": 100})
    path = "/v1/hands" + request_.get("query", "")
    if "content" in request_:
        response = client.post(path, content=request_["content"], headers=headers)
    else:
        response = client.post(path, json=body, headers=headers)
    assert response.status_code == status, response.text
    assert framework.posted == ["/v1/hands"]


def test_a_caller_of_another_role_goes_to_the_framework(
    recording: tuple[Recording, TestClient[Litestar]], settings: Settings
) -> None:
    framework, client = recording
    operator = Caller(client, issue_test_token(settings, Role.OPERATOR))
    operator.get("/v1/me")
    framework.posted.clear()
    refused = operator.post("/v1/hands", {"table_id": standard_table_id(operator), "bet": 100})
    assert refused.status_code == 403
    assert framework.posted == ["/v1/hands"]


@pytest.mark.parametrize(
    "path",
    [
        pytest.param("/v1/hands/", id="trailing-slash"),
        pytest.param("/v1/hands/01/decision", id="leading-zero"),
        pytest.param("/v1/hands/99999999999999999999/decision", id="beyond-64-bits"),
        pytest.param("/v1/cashier/deposits/", id="cashier-trailing-slash"),
    ],
)
def test_a_path_spelled_otherwise_goes_to_the_framework(
    recording: tuple[Recording, TestClient[Litestar]],
    known_player: tuple[Caller, int],
    path: str,
) -> None:
    framework, _ = recording
    player, table_id = known_player
    framework.posted.clear()
    player.post(path, {"action": "war"} if "decision" in path else {"table_id": table_id, "bet": 1})
    assert framework.posted == [path]
