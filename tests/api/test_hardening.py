"""The HTTP edge under hostile input: every bad body is a problem, never a 500, and moves
nothing; every response carries the headers that keep tokens and seeds out of caches."""

import httpx
import pytest
from litestar import Litestar
from litestar.testing import TestClient

from api.app import create_app
from api.settings import Settings
from tests.api.conftest import Caller, LiveServer, new_key


def _post_raw(caller: Caller, path: str, body: bytes, content_type: str | None) -> httpx.Response:
    headers = {**caller.headers, "Idempotency-Key": new_key()}
    if content_type is not None:
        headers["Content-Type"] = content_type
    return caller.client.post(path, content=body, headers=headers)


def test_a_405_names_the_allowed_methods(operator: Caller) -> None:
    response = operator.client.delete("/v1/tables", headers=operator.headers)
    assert response.status_code == 405
    assert response.json()["code"] == "method_not_allowed"
    assert "GET" in response.headers["allow"] and "POST" in response.headers["allow"]


@pytest.mark.parametrize("path", ["/v1/tables", "/v1/no-such-thing", "/health"])
def test_every_response_carries_nosniff_and_no_referrer(operator: Caller, path: str) -> None:
    response = operator.get(path)
    assert response.headers["x-content-type-options"] == "nosniff"
    assert response.headers["referrer-policy"] == "no-referrer"


def test_api_responses_are_never_stored_by_caches(operator: Caller) -> None:
    assert operator.get("/v1/tables").headers["cache-control"] == "no-store"
    assert operator.post("/v1/players", {"display_name": "Ada"}).headers["cache-control"] == (
        "no-store"
    )


@pytest.mark.parametrize("content_type", ["text/plain", None, "application/x-www-form-urlencoded"])
def test_a_json_route_refuses_another_media_type_and_creates_nothing(
    operator: Caller, content_type: str | None
) -> None:
    before = operator.post("/v1/players", {"display_name": "before"}).json()["id"]
    response = _post_raw(operator, "/v1/players", b'{"display_name": "x"}', content_type)
    assert response.status_code == 415
    assert response.json()["code"] == "unsupported_media_type"
    after = operator.post("/v1/players", {"display_name": "after"}).json()["id"]
    assert after == before + 1


def test_a_json_body_with_a_charset_is_accepted(operator: Caller) -> None:
    response = _post_raw(
        operator, "/v1/players", b'{"display_name": "x"}', "application/json; charset=utf-8"
    )
    assert response.status_code == 201


@pytest.mark.parametrize(
    "body",
    [
        b'{"display_name": ' + b"[" * 1000 + b"]" * 1000 + b"}",
        b'{"display_name": "\xff\xfe"}',
    ],
    ids=["nested-1000-deep", "not-utf-8"],
)
def test_a_malformed_body_is_a_400_problem_not_a_500(operator: Caller, body: bytes) -> None:
    response = _post_raw(operator, "/v1/players", body, "application/json")
    assert response.status_code == 400
    assert response.json()["code"] == "malformed_body"


def test_brackets_inside_strings_are_not_nesting(operator: Caller) -> None:
    name = "[" * 40
    response = operator.post("/v1/players", {"display_name": name})
    assert response.status_code == 201 and response.json()["display_name"] == name


@pytest.mark.parametrize(
    "text", ["tab\there", "bell\x07", "next\x85line", "rtl\u202eoverride", "isolate\u2066x"]
)
def test_control_characters_in_free_text_are_refused_naming_the_field(
    operator: Caller, text: str
) -> None:
    response = operator.post("/v1/players", {"display_name": text})
    assert response.status_code == 422
    assert response.json()["code"] == "validation_error"
    assert "display_name" in response.text


def test_control_characters_in_an_idempotency_key_are_refused(operator: Caller) -> None:
    response = operator.client.post(
        "/v1/players",
        json={"display_name": "Ada"},
        headers=[
            *((name.encode(), value.encode()) for name, value in operator.headers.items()),
            (b"Idempotency-Key", "key\u202e".encode()),
        ],
    )
    assert response.status_code == 422
    assert "idempotency_key" in response.text


def test_cors_is_off_unless_origins_are_configured(client: TestClient[Litestar]) -> None:
    preflight = {
        "Origin": "https://play.example",
        "Access-Control-Request-Method": "POST",
    }
    response = client.options("/v1/hands", headers=preflight)
    assert "access-control-allow-origin" not in response.headers


def test_configured_origins_may_call_the_api_from_a_browser(database_url: str) -> None:
    settings = Settings(database_url=database_url, cors_allowed_origins=("https://play.example",))
    with TestClient(app=create_app(settings)) as client:
        response = client.get("/health", headers={"Origin": "https://play.example"})
        assert response.headers["access-control-allow-origin"] == "https://play.example"
        other = client.get("/health", headers={"Origin": "https://evil.example"})
        assert other.headers.get("access-control-allow-origin") != "https://evil.example"


def test_the_server_announces_no_banner(live_server: LiveServer) -> None:
    response = httpx.get(f"{live_server.base_url}/health")
    assert "server" not in response.headers
