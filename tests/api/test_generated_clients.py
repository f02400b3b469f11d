"""The OpenAPI document as a contract generators are happy with: it validates, the Python
client openapi-python-client generates from it without a warning plays a whole session
against a real server, and the TypeScript types openapi-typescript generates type-check a
small typed client."""

import importlib
import json
import os
import shutil
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest
from litestar import Litestar
from litestar.testing import TestClient
from openapi_spec_validator import validate

from api.domain.hands.routes import HandController
from api.domain.tokens.service import Role
from tests.api.conftest import LiveServer

BIN = Path(sys.executable).parent
TYPED_CLIENT = Path(__file__).parent.parent / "data" / "typed_client.ts"


@pytest.fixture
def document(client: TestClient[Litestar]) -> dict[str, Any]:
    served: dict[str, Any] = client.get("/schema/openapi.json").json()
    return served


def test_the_document_is_valid_openapi(document: dict[str, Any]) -> None:
    validate(document)  # raises on any violation


def test_every_operation_id_is_a_short_camel_case_verb_and_noun(document: dict[str, Any]) -> None:
    ids = [
        operation["operationId"]
        for item in document["paths"].values()
        for operation in item.values()
        if isinstance(operation, dict) and "operationId" in operation
    ]
    assert len(ids) == len(set(ids))
    for operation_id in ids:
        assert operation_id[0].islower() and operation_id.isalpha(), operation_id
    assert {"placeHand", "decideHand", "rotateSeeds", "getPayoutReport"} <= set(ids)


def test_problem_responses_list_their_codes(document: dict[str, Any]) -> None:
    deal = document["paths"]["/v1/hands"]["post"]["responses"]
    assert "`insufficient_funds`" in deal["422"]["description"]
    example = deal["401"]["content"]["application/problem+json"]["example"]
    assert example["status"] == 401 and example["code"] == "unauthorized"
    assert "Retry-After" in deal["503"]["headers"]
    assert "Idempotent-Replayed" in deal["201"]["headers"]


def test_integer_bounds_are_integers_and_csv_is_declared(document: dict[str, Any]) -> None:
    assert "e+18" not in json.dumps(document)
    payouts = document["paths"]["/v1/reports/payouts"]["get"]["responses"]["200"]
    assert "text/csv" in payouts["content"]


def test_operations_are_described_by_their_handlers_docstrings(document: dict[str, Any]) -> None:
    described = document["paths"]["/v1/hands"]["post"]["description"]
    first_line = (HandController.place_hand.fn.__doc__ or "").strip().splitlines()[0]
    assert first_line and first_line in described


def test_enums_and_nullable_enums_are_named_components(document: dict[str, Any]) -> None:
    names = set(document["components"]["schemas"])
    assert {"Outcome", "HandStatus", "Action", "DecidedBy", "Period", "SortOrder"} <= names
    assert "EventKind" in names


def test_no_route_declares_a_response_shape_it_never_sends(document: dict[str, Any]) -> None:
    """Litestar's own 400 body is not the service's: refusals are problems, listed by code."""
    for path, item in document["paths"].items():
        for method, operation in item.items():
            response = operation.get("responses", {}).get("400")
            if response is not None:
                assert "application/problem+json" in response.get("content", {}), (path, method)


def _generate_python_client(spec: Path, into: Path) -> str:
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    result = subprocess.run(
        [str(BIN / "openapi-python-client"), "generate", "--path", str(spec),
         "--output-path", str(into)],
        capture_output=True, text=True, env=env, timeout=300, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout + result.stderr


def test_the_generated_python_client_plays_a_whole_session(
    live_server: LiveServer, tmp_path: Path
) -> None:
    import httpx

    spec = tmp_path / "openapi.json"
    spec.write_text(httpx.get(f"{live_server.base_url}/schema/openapi.json").text)
    output = _generate_python_client(spec, tmp_path / "client")
    assert "Warning" not in output and "WARNING" not in output, output
    sys.path.insert(0, str(tmp_path / "client"))
    try:
        _play_a_session(live_server)
    finally:
        sys.path.remove(str(tmp_path / "client"))
        for name in [m for m in sys.modules if m.startswith("casino_war_client")]:
            del sys.modules[name]


def _play_a_session(server: LiveServer) -> None:
    client_module = importlib.import_module("casino_war_client")
    models = importlib.import_module("casino_war_client.models")

    def api(name: str) -> Any:
        return importlib.import_module(f"casino_war_client.api.{name}")

    def key() -> str:
        return uuid.uuid4().hex

    operator = client_module.AuthenticatedClient(
        base_url=server.base_url, token=server.token(Role.OPERATOR)
    )
    created = api("players.create_player").sync(
        client=operator, body=models.PlayerCreate(display_name="Generated"), idempotency_key=key()
    )
    player = client_module.AuthenticatedClient(base_url=server.base_url, token=created.token)
    api("cashier.make_deposit").sync(
        client=operator,
        body=models.CashierRequest(player_id=created.id, amount=100_000, currency="USD"),
        idempotency_key=key(),
    )
    tables = api("tables.list_tables").sync(client=player)
    table_id = tables.items[0].id
    for _ in range(300):
        hand = api("hands.place_hand").sync(
            client=player, body=models.HandOpen(table_id=table_id, bet=100), idempotency_key=key()
        )
        if hand.status.value == "awaiting_decision":
            break
    else:
        pytest.fail("no tie in 300 hands")
    decided = api("hands.decide_hand").sync(
        hand_id=hand.id,
        client=player,
        body=models.Decision(action=models.Action.WAR),
        idempotency_key=key(),
    )
    assert decided.status.value == "settled" and decided.decision.value == "war"
    rotation = api("fairness.rotate_seeds").sync(
        client=player, body=models.RotateSeeds(client_seed="generated"), idempotency_key=key()
    )
    assert rotation.current.client_seed == "generated"
    day = decided.settled_at.date().isoformat()
    report = api("reports.get_payout_report_csv").sync_detailed(client=operator, from_=day, to=day)
    assert report.status_code == 200
    assert b"TOTAL" in report.content


def test_the_typescript_types_check_a_typed_client(
    document: dict[str, Any], tmp_path: Path
) -> None:
    npm = shutil.which("npm")
    if npm is None:
        pytest.skip("npm is not installed: the TypeScript types cannot be generated")
    (tmp_path / "openapi.json").write_text(json.dumps(document))
    install = subprocess.run(
        [npm, "install", "--silent", "--no-audit", "--no-fund", "openapi-typescript@7",
         "typescript@5"],
        cwd=tmp_path, capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    if install.returncode != 0:
        pytest.skip(f"npm could not install the generators: {install.stderr.strip()[:200]}")
    bin_dir = tmp_path / "node_modules" / ".bin"
    generated = subprocess.run(
        [str(bin_dir / "openapi-typescript"), "openapi.json", "-o", "api.d.ts"],
        cwd=tmp_path, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert generated.returncode == 0, generated.stderr
    shutil.copy(TYPED_CLIENT, tmp_path / "client.ts")
    checked = subprocess.run(
        [str(bin_dir / "tsc"), "--noEmit", "--strict", "--target", "es2022",
         "--moduleResolution", "node", "client.ts"],
        cwd=tmp_path, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_an_optional_body_is_optional_and_seeds_carry_their_pattern(
    document: dict[str, Any],
) -> None:
    rotate = document["paths"]["/v1/me/seeds/rotate"]["post"]["requestBody"]
    assert rotate["required"] is False
    seed = document["components"]["schemas"]["RotateSeeds"]["properties"]["client_seed"]
    assert {"type": "string", "pattern": "^[A-Za-z0-9_-]{1,64}$"} in seed["oneOf"]
