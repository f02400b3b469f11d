"""An auditor at /audit, in a real browser on the real app: replays a hand, sees its record
and the re-derived hand side by side with the verdict, and the ledger's integrity."""

import os
from pathlib import Path

import httpx
import pytest

from api.domain.tokens.service import Role
from tests.api.conftest import LiveServer
from tests.web import webdriver
from tests.web.test_play_page import DOCS_SCREENSHOTS

pytestmark = pytest.mark.skipif(
    not webdriver.available(), reason="Debian's chromium and chromium-driver are not installed"
)


def _a_hand(server: LiveServer) -> int:
    operator = {"Authorization": f"Bearer {server.token(Role.OPERATOR)}"}
    created = httpx.post(
        f"{server.base_url}/v1/players", json={"display_name": "Audited"},
        headers={**operator, "Idempotency-Key": "audited"},
    ).json()  # fmt: skip
    httpx.post(
        f"{server.base_url}/v1/cashier/deposits",
        json={"player_id": created["id"], "amount": 10_000, "currency": "USD"},
        headers={**operator, "Idempotency-Key": "audited-deposit"},
    )
    player = {"Authorization": f"Bearer {created['token']}"}
    table = httpx.get(f"{server.base_url}/v1/tables", headers=player).json()["items"][0]["id"]
    hand = httpx.post(
        f"{server.base_url}/v1/hands", json={"table_id": table, "bet": 100},
        headers={**player, "Idempotency-Key": "audited-hand"},
    ).json()  # fmt: skip
    return int(hand["id"])


def test_an_auditor_replays_a_hand_and_checks_the_ledger(
    server: LiveServer, tmp_path: Path
) -> None:
    hand_id = _a_hand(server)
    screenshots = DOCS_SCREENSHOTS if os.environ.get("CASINO_WAR_SCREENSHOTS") else tmp_path
    with webdriver.browser() as page:
        page.size(375, 1200)
        page.open(f"{server.base_url}/audit")
        page.type("token-input", server.token(Role.AUDITOR))
        page.click("sign-in")
        page.wait("return !document.getElementById('desk').hidden")
        assert page.fits_its_width()  # usable at 375 px
        page.type("hand-id", str(hand_id))
        page.click("replay")
        verdict = page.wait(
            "const v = document.querySelector('[data-testid=verdict]').textContent;"
            "return ['match', 'mismatch'].includes(v) ? v : null"
        )
        assert verdict == "match"
        assert page.script("return document.querySelectorAll('#comparison .differs').length") == 0
        assert page.script("return document.querySelectorAll('#transactions li').length") >= 1
        page.click("integrity")
        sections = page.wait("return document.querySelectorAll('#integrity li').length")
        assert sections >= 5
        assert page.script("return document.querySelectorAll('#integrity .mismatch').length") == 0
        screenshots.mkdir(exist_ok=True)
        (screenshots / "audit.png").write_bytes(page.screenshot())
