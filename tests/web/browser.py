"""A real headless Chromium (Debian's `chromium`), run on a page until its scripts have
settled, and the DOM it ends with: enough to test pages whose work is done by script."""

import shutil
import subprocess
import tempfile
from pathlib import Path

CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)


def chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


def final_dom(url: str, *, budget_ms: int = 20_000) -> str:
    """The page's DOM once its scripts (Web Crypto promises included) have run."""
    browser = chromium()
    if browser is None:
        raise RuntimeError("chromium is not installed")
    with tempfile.TemporaryDirectory() as profile:
        result = subprocess.run(
            [browser, *CHROMIUM_FLAGS, f"--user-data-dir={profile}",
             f"--virtual-time-budget={budget_ms}", "--dump-dom", url],
            capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip
    if result.returncode != 0:
        raise RuntimeError(f"chromium failed: {result.stderr[-500:]}")
    return result.stdout


def file_url(path: Path) -> str:
    return path.resolve().as_uri()
