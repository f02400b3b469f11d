"""The README's Quickstart runs as written: docs/quickstart.sh, end to end, on a fresh
database and a free port, with the checkout's command line."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.ports import free_port

SCRIPT = Path(__file__).resolve().parent.parent / "docs" / "quickstart.sh"


def test_the_quickstart_script_plays_a_war_and_verifies_it(tmp_path: Path) -> None:
    if shutil.which("curl") is None:
        pytest.skip("the Quickstart calls the API with curl, which is not installed")
    env = {
        **os.environ,
        "CASINO_WAR": f"{sys.executable} -m api.cli",
        "PORT": str(free_port()),
        "CASINO_WAR_DATABASE_URL": f"sqlite:///{tmp_path / 'quickstart.db'}",
        "PYTHONPATH": str(SCRIPT.parent.parent),
    }
    result = subprocess.run(
        ["bash", str(SCRIPT)], cwd=tmp_path, env=env, capture_output=True, text=True,
        timeout=300, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    assert "(matches the published hash)" in result.stdout
    assert "war: war_" in result.stdout
