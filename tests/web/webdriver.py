"""Debian's chromedriver driven over the W3C WebDriver protocol with plain HTTP: enough to
click through a page as a person would, with no extra library."""

import base64
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx

from tests.ports import free_port
from tests.web.browser import CHROMIUM_FLAGS, chromium

ELEMENT = "element-6066-11e4-a52e-4f735466cecf"


def available() -> bool:
    return chromium() is not None and shutil.which("chromedriver") is not None


class Browser:
    def __init__(self, base: str, session: str) -> None:
        self._base = f"{base}/session/{session}"

    def _call(self, method: str, path: str, body: Any = None) -> Any:
        response = httpx.request(method, self._base + path, json=body, timeout=60)
        value = response.json()["value"]
        if response.status_code != 200:
            raise AssertionError(f"webdriver {path}: {value}")
        return value

    def open(self, url: str) -> None:
        self._call("POST", "/url", {"url": url})

    def size(self, width: int, height: int) -> None:
        self._call("POST", "/window/rect", {"width": width, "height": height})

    def find(self, testid: str) -> str:
        found = self._call(
            "POST", "/element", {"using": "css selector", "value": f'[data-testid="{testid}"]'}
        )
        return str(found[ELEMENT])

    def type(self, testid: str, text: str) -> None:
        element = self.find(testid)
        self._call("POST", f"/element/{element}/clear", {})
        self._call("POST", f"/element/{element}/value", {"text": text})

    def click(self, testid: str) -> None:
        self._call("POST", f"/element/{self.find(testid)}/click", {})

    def text(self, testid: str) -> str:
        return str(self._call("GET", f"/element/{self.find(testid)}/text"))

    def enabled(self, testid: str) -> bool:
        return bool(self._call("GET", f"/element/{self.find(testid)}/enabled"))

    def script(self, source: str, *args: Any) -> Any:
        return self._call("POST", "/execute/sync", {"script": source, "args": list(args)})

    def wait(self, condition: str, *args: Any, seconds: float = 60) -> Any:
        """Poll a script until it returns something truthy."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            value = self.script(condition, *args)
            if value:
                return value
            time.sleep(0.1)
        raise AssertionError(f"timed out waiting for: {condition}")

    def fits_its_width(self) -> bool:
        """Whether the page needs no sideways scrolling at the window's width."""
        return bool(
            self.script("const d = document.documentElement; return d.scrollWidth <= d.clientWidth")
        )

    def screenshot(self) -> bytes:
        return base64.b64decode(self._call("GET", "/screenshot"))


@contextmanager
def browser() -> Iterator[Browser]:
    port = free_port()
    driver = subprocess.Popen(
        ["chromedriver", f"--port={port}"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"{base}/status", timeout=1).json()["value"]["ready"]:
                    break
            except httpx.HTTPError:
                time.sleep(0.1)
        with tempfile.TemporaryDirectory() as profile:
            options = {
                "binary": chromium(),
                "args": [*CHROMIUM_FLAGS, f"--user-data-dir={profile}"],
            }
            created = httpx.post(
                f"{base}/session",
                json={"capabilities": {"alwaysMatch": {"goog:chromeOptions": options}}},
                timeout=60,
            ).json()["value"]
            session = Browser(base, created["sessionId"])
            try:
                yield session
            finally:
                httpx.delete(f"{base}/session/{created['sessionId']}", timeout=30)
    finally:
        driver.terminate()
        driver.wait(timeout=15)
