"""A player at /play, in a real browser, on the real app and database: signs in with a
token, plays until a tie, goes to war, sees the result, reveals the seed, and verifies the
hand in /verify, which finds the seed matching its commitment."""

import os
from pathlib import Path

import httpx
import pytest

from api.domain.tokens.service import Role
from tests.api.conftest import LiveServer
from tests.web import webdriver

pytestmark = pytest.mark.skipif(
    not webdriver.available(), reason="Debian's chromium and chromium-driver are not installed"
)
NEWEST_HAND = "document.getElementById('history').firstChild?.textContent"
DOCS_SCREENSHOTS = Path(__file__).resolve().parent.parent.parent / "docs" / "screenshots"


def _funded_player(server: LiveServer) -> str:
    operator = {"Authorization": f"Bearer {server.token(Role.OPERATOR)}"}
    created = httpx.post(
        f"{server.base_url}/v1/players",
        json={"display_name": "Browser"},
        headers={**operator, "Idempotency-Key": "browser-player"},
    ).json()
    httpx.post(
        f"{server.base_url}/v1/cashier/deposits",
        json={"player_id": created["id"], "amount": 1_000_000, "currency": "USD"},
        headers={**operator, "Idempotency-Key": "browser-deposit"},
    )
    return str(created["token"])


def test_a_player_plays_to_a_war_and_verifies_the_hand(server: LiveServer, tmp_path: Path) -> None:
    # CASINO_WAR_SCREENSHOTS=1 refreshes docs/screenshots; otherwise they go to a temp folder.
    screenshots = DOCS_SCREENSHOTS if os.environ.get("CASINO_WAR_SCREENSHOTS") else tmp_path
    token = _funded_player(server)
    with webdriver.browser() as page:
        page.size(375, 900)  # a phone's width
        page.open(f"{server.base_url}/play")
        page.type("token-input", token)
        page.click("sign-in")
        page.wait("return !document.getElementById('table').hidden")  # signed in, all shown
        assert page.fits_its_width()  # usable at 375 px
        assert page.text("balance") == "1000000 USD"
        commitment = page.text("server-seed-hash")
        for _ in range(300):
            before = page.script(f"return {NEWEST_HAND}")
            page.click("deal")
            page.wait(f"return {NEWEST_HAND} !== arguments[0]", before)
            if page.enabled("war"):
                break
        else:
            pytest.fail("no tie in 300 hands")
        page.click("war")
        outcome = page.wait(
            "const o = document.querySelector('[data-testid=outcome]').textContent;"
            "return o.startsWith('war_') ? o : null"
        )
        net = page.text("net")
        page.wait(
            "return document.querySelector('[data-testid=recall]')?.textContent"
            ".includes('by the player')"
        )
        page.script("document.querySelector('[data-testid=recall] summary').click()")
        recalled = page.script(
            "const r = document.querySelector('[data-testid=recall]'); return r.open && r.innerText"
        )
        assert "balance after" in recalled and "war (by the player)" in recalled
        screenshots.mkdir(exist_ok=True)
        (screenshots / "play.png").write_bytes(page.screenshot())
        page.click("rotate-seeds")
        link = page.wait(
            "const a = document.querySelector('[data-testid=verify-link]'); return a && a.href"
        )
        assert commitment in page.text("revealed")
        page.open(link)
        page.wait("return document.querySelector('[data-testid=commitment]').textContent")
        assert page.fits_its_width()
        assert page.text("commitment") == "match"
        assert page.text("outcome") == outcome
        assert page.text("net") == net
        assert commitment in link
        (screenshots / "verify.png").write_bytes(page.screenshot())
