"""An operator at /office, in a real browser on the real app: registers a player, deposits,
opens a table, and reads the payout chart of the day's hands."""

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


def _notice(page: webdriver.Browser) -> str:
    return str(page.wait("return document.getElementById('notice').textContent"))


def test_an_operator_registers_a_player_opens_a_table_and_reads_the_chart(
    server: LiveServer, tmp_path: Path
) -> None:
    screenshots = DOCS_SCREENSHOTS if os.environ.get("CASINO_WAR_SCREENSHOTS") else tmp_path
    with webdriver.browser() as page:
        page.size(375, 1400)
        page.open(f"{server.base_url}/office")
        page.type("token-input", server.token(Role.OPERATOR))
        page.click("sign-in")
        page.wait("return !document.getElementById('office').hidden")
        assert page.fits_its_width()  # usable at 375 px
        page.type("player-name", "Grace")
        page.click("create-player")
        registered = _notice(page)
        player_id = registered.split()[1]
        token = registered.rsplit(" ", 1)[1]
        page.type("cashier-player", player_id)
        page.type("cashier-amount", "50000")
        page.click("deposit")
        page.wait("return document.getElementById('notice').textContent.includes('50000')")
        page.type("protect-player", player_id)
        page.type("limit-amount", "100000")
        page.click("set-limit")
        page.wait("return document.getElementById('notice').textContent.includes('deposit a day')")
        page.click("resolve")
        page.wait("return document.getElementById('notice').textContent.includes('resolved')")
        page.type("table-name", "evening")
        page.click("create-table")
        page.wait("return document.getElementById('tables').textContent.includes('evening')")
        player = {"Authorization": f"Bearer {token}"}
        for number in range(5):
            response = httpx.post(
                f"{server.base_url}/v1/hands", json={"table_id": 1, "bet": 100},
                headers={**player, "Idempotency-Key": f"chart-{number}"},
            )  # fmt: skip
            if response.json()["status"] == "awaiting_decision":
                httpx.post(
                    f"{server.base_url}/v1/hands/{response.json()['id']}/decision",
                    json={"action": "surrender"},
                    headers={**player, "Idempotency-Key": f"chart-decide-{number}"},
                )
        page.click("report")
        bars = page.wait("return document.querySelectorAll('#chart rect[data-handle]').length")
        assert bars == 1  # one gaming day
        handle = page.script("return document.querySelector('#chart rect').dataset.handle")
        assert int(handle) >= 500
        page.script("document.getElementById('chart').scrollIntoView()")
        screenshots.mkdir(exist_ok=True)
        (screenshots / "office.png").write_bytes(page.screenshot())
