"""A player at /war, in a real browser: deals a free game, plays it to its end, and sees the
server seed revealed."""

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


def test_a_player_plays_a_free_war_game_to_its_end(server: LiveServer, tmp_path: Path) -> None:
    screenshots = DOCS_SCREENSHOTS if os.environ.get("CASINO_WAR_SCREENSHOTS") else tmp_path
    operator = {"Authorization": f"Bearer {server.token(Role.OPERATOR)}"}
    token = httpx.post(
        f"{server.base_url}/v1/players", json={"display_name": "Free"},
        headers={**operator, "Idempotency-Key": "free-player"},
    ).json()["token"]  # fmt: skip
    with webdriver.browser() as page:
        page.size(375, 900)
        page.open(f"{server.base_url}/war")
        page.type("token-input", token)
        page.click("sign-in")
        page.wait("return !document.getElementById('lobby').hidden")
        assert page.fits_its_width()  # usable at 375 px
        page.type("max-turns", "3")
        page.click("new-game")
        page.wait("return document.querySelector('[data-testid=turn]').textContent === '0'")
        commitment = page.text("commitment")
        for turn in (1, 2, 3):
            page.click("play-turn")
            page.wait(
                "return document.querySelector('[data-testid=turn]').textContent === arguments[0]",
                str(turn),
            )
            if page.text("end"):
                break
        end = page.wait("return document.querySelector('[data-testid=end]').textContent")
        assert "Game over" in end and "Server seed" in end
        assert page.text("last-turn").startswith("turn ")
        assert len(commitment) == 64
        screenshots.mkdir(exist_ok=True)
        (screenshots / "war.png").write_bytes(page.screenshot())
