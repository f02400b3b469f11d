"""The served OpenAPI document describes the API, and a schema-driven fuzzer finds no fault.

schemathesis generates requests from `/schema/openapi.json` and checks that no response is a
500 and that every response (status, content type, body) is one the document promises.
"""

from collections.abc import Iterator
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from litestar import Litestar
from litestar.testing import TestClient
from schemathesis import checks
from schemathesis.core.result import Err

from api.app import create_app
from api.domain.tokens.service import Role
from api.settings import Settings
from tests.api.conftest import Caller, issue_test_token, new_player

# No 500, and every response as documented. (Schemathesis' heuristics that a schema-valid
# request must succeed do not apply: the game refuses valid-looking bets by its rules.)
CHECKS = [
    checks.not_a_server_error,
    checks.status_code_conformance,
    checks.content_type_conformance,
    checks.response_schema_conformance,
    checks.response_headers_conformance,
]

SPEC_PATHS = {
    "/v1/players",
    "/v1/players/{player_id}",
    "/v1/me",
    "/v1/cashier/deposits",
    "/v1/cashier/withdrawals",
    "/v1/tables",
    "/v1/tables/{table_id}",
    "/v1/tables/{table_id}/close",
    "/v1/tables/{table_id}/open",
    "/v1/me/seeds",
    "/v1/me/seeds/rotate",
    "/v1/me/seeds/revealed",
    "/v1/hands",
    "/v1/hands/{hand_id}",
    "/v1/hands/{hand_id}/decision",
    "/health",
    "/ready",
}


def test_the_document_describes_every_route_of_the_contract(client: TestClient[Litestar]) -> None:
    document = client.get("/schema/openapi.json").json()
    assert set(document["paths"]) >= SPEC_PATHS
    assert document["components"]["securitySchemes"]["bearer"]["scheme"] == "bearer"
    deal = document["paths"]["/v1/hands"]["post"]
    assert {"201", "401", "409", "422"} <= set(deal["responses"])


def test_an_interactive_docs_page_is_served(client: TestClient[Litestar]) -> None:
    page = client.get("/schema")
    assert page.status_code == 200
    assert "text/html" in page.headers["content-type"]


@pytest.fixture
def fuzz_app(settings: Settings) -> Iterator[tuple[Litestar, dict[str, str]]]:
    """The app with an operator and a funded player, so generated requests reach the game."""
    app = create_app(settings)
    with TestClient(app) as client:
        operator = Caller(client, issue_test_token(settings, Role.OPERATOR))
        player, _ = new_player(operator, deposit=10_000_000)
        yield app, {"operator": operator.token, "player": player.token}


def test_the_fuzzer_finds_no_server_error_and_no_undocumented_response(
    fuzz_app: tuple[Litestar, dict[str, str]],
) -> None:
    app, tokens = fuzz_app
    api_schema = schemathesis.openapi.from_asgi("/schema/openapi.json", app)
    results = list(api_schema.get_all_operations())
    unreadable = [result.err() for result in results if isinstance(result, Err)]
    assert unreadable == [], "the document describes operations schemathesis cannot read"
    operations = [result.ok() for result in results if not isinstance(result, Err)]
    assert len(operations) >= len(SPEC_PATHS)
    for operation in operations:
        if operation.path.endswith("/revoke"):
            continue  # would revoke the very tokens the rest of the run calls with
        plays = operation.path.startswith(("/v1/me", "/v1/hands"))
        headers = {"Authorization": f"Bearer {tokens['player' if plays else 'operator']}"}

        @given(case=operation.as_strategy())
        @settings(max_examples=15, deadline=None, suppress_health_check=list(HealthCheck))
        def call(case: schemathesis.Case[Any]) -> None:
            case.call_and_validate(headers=headers, checks=CHECKS)  # noqa: B023 - runs in the loop

        call()
