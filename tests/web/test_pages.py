"""The pages the app serves, every asset from inside the package: the index, the verifier
(also as a download), and the API docs, which render in a real browser with no network."""

import re

import httpx
import pytest
from litestar import Litestar
from litestar.testing import TestClient

from tests.api.conftest import LiveServer
from tests.web.browser import chromium, final_dom


def test_the_index_leads_to_the_pages(client: TestClient[Litestar]) -> None:
    page = client.get("/")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    for path in ("/play", "/office", "/audit", "/war", "/verify", "/verify/download", "/schema"):
        assert f'href="{path}"' in page.text, path


def test_the_verifier_is_served_and_offered_as_a_download(client: TestClient[Litestar]) -> None:
    page = client.get("/verify")
    download = client.get("/verify/download")
    assert 'data-testid="verify"' in page.text and download.text == page.text
    assert "attachment" in download.headers["content-disposition"]


def test_no_page_loads_anything_from_another_host(client: TestClient[Litestar]) -> None:
    for path in ("/", "/verify", "/schema", "/schema/swagger"):
        external = re.findall(r"""(?:src|href)=["'](?:https?:)?//""", client.get(path).text)
        assert external == [], path


@pytest.mark.skipif(chromium() is None, reason="Debian's chromium is not installed")
@pytest.mark.parametrize("path", ["/schema", "/schema/swagger"])
def test_the_api_docs_render_in_a_browser_with_no_network(server: LiveServer, path: str) -> None:
    assert httpx.get(f"{server.base_url}/schema/assets/swagger-ui-bundle.js").status_code == 200
    dom = final_dom(f"{server.base_url}{path}", budget_ms=30_000)
    assert "placeHand" in dom or "/v1/hands" in dom
    assert "swagger-ui" in dom
