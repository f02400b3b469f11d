"""The service says what it is doing: a start-up line, an access log with request ids, and
one line (exit 2) for every configuration or connection error, with real processes."""

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from litestar import Litestar
from litestar.testing import TestClient
from sqlalchemy.engine import make_url

from api.version import SOFTWARE_VERSION
from tests.ports import free_port

CLI = [sys.executable, "-m", "api.cli"]


def _with_password(url: str) -> str:
    """The URL with a password (trust authentication ignores it): it must never be shown."""
    if not url.startswith("postgresql"):
        return url
    return make_url(url).set(password="s3cret-pw").render_as_string(hide_password=False)


class Served:
    def __init__(self, url: str, *extra_env: tuple[str, str]) -> None:
        self.port = free_port()
        env = {**os.environ, "CASINO_WAR_DATABASE_URL": url, **dict(extra_env)}
        self.process = subprocess.Popen(
            [*CLI, "serve", "--port", str(self.port)],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.base = f"http://127.0.0.1:{self.port}"
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"{self.base}/ready", timeout=1).status_code == 200:
                    return
            except httpx.HTTPError:
                time.sleep(0.2)
        raise RuntimeError("the server did not start")

    def stop(self) -> str:
        self.process.send_signal(signal.SIGTERM)
        _, stderr = self.process.communicate(timeout=15)
        return stderr


@pytest.fixture
def served(database_url: str) -> Iterator[Served]:
    server = Served(_with_password(database_url))
    yield server
    if server.process.poll() is None:
        server.stop()


def test_serve_announces_its_url_database_workers_and_version_hiding_the_password(
    served: Served,
) -> None:
    stderr = served.stop()
    (line,) = [line for line in stderr.splitlines() if line.startswith("casino-war ")]
    assert f"serving http://127.0.0.1:{served.port}" in line and "1 worker" in line
    assert "database " in line and "s3cret-pw" not in stderr
    assert line.startswith(f"casino-war {SOFTWARE_VERSION} serving ")


def test_every_request_is_one_access_log_line_with_its_request_id(served: Served) -> None:
    response = httpx.get(f"{served.base}/health", headers={"X-Request-ID": "trace-42"})
    assert response.headers["x-request-id"] == "trace-42"
    missing = httpx.get(f"{served.base}/no-such-page")
    generated = missing.headers["x-request-id"]
    stderr = served.stop()
    assert any("GET /health 200" in line and "trace-42" in line for line in stderr.splitlines())
    assert any(
        "GET /no-such-page 404" in line and generated in line for line in stderr.splitlines()
    )
    assert "Bearer" not in stderr and "cw_" not in stderr


def test_the_access_log_can_be_json_lines(database_url: str) -> None:
    server = Served(database_url, ("CASINO_WAR_LOG_FORMAT", "json"))
    httpx.get(f"{server.base}/health", headers={"X-Request-ID": "json-1"})
    stderr = server.stop()
    documents = [json.loads(line) for line in stderr.splitlines() if line.startswith("{")]
    (health,) = [d for d in documents if d.get("request_id") == "json-1"]
    assert (health["method"], health["path"], health["status"]) == ("GET", "/health", 200)
    assert health["duration_ms"] >= 0


def test_the_access_log_can_be_turned_off(database_url: str) -> None:
    server = Served(database_url, ("CASINO_WAR_ACCESS_LOG", "false"))
    response = httpx.get(f"{server.base}/health", headers={"X-Request-ID": "quiet-1"})
    stderr = server.stop()
    assert response.headers["x-request-id"] == "quiet-1"
    assert "GET /health" not in stderr and "quiet-1" not in stderr


def test_an_insane_request_id_is_replaced(client: TestClient[Litestar]) -> None:
    response = client.get("/health", headers={"X-Request-ID": "bad id\twith spaces"})
    assert response.headers["x-request-id"] != "bad id\twith spaces"


def _run(
    *argv: str, env: dict[str, str] | None = None, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        argv, env={**os.environ, **(env or {})}, capture_output=True, text=True, timeout=60,
        cwd=cwd, check=False,
    )  # fmt: skip


@pytest.mark.parametrize(
    ("setting", "says"),
    [
        ({"CASINO_WAR_GAMING_DAY_START_HOUR": "25"}, "CASINO_WAR_GAMING_DAY_START_HOUR"),
        ({"CASINO_WAR_DATABASE_URL": "mysql://u@localhost/casino"}, "sqlite:///PATH"),
        ({"CASINO_WAR_DATABASE_URL": "postgresql://u@127.0.0.1:1/casino"}, "cannot reach"),
        ({"CASINO_WAR_DATABASE_URL": "postgresql://u@nosuchhost.invalid/db"}, "cannot reach"),
        ({"CASINO_WAR_DATABASE_URL": "sqlite:////nonexistent/dir/x.db"}, "cannot open"),
        ({"CASINO_WAR_GAMING_DAY_TIMEZONE": "Mars/Base"}, "CASINO_WAR_GAMING_DAY_TIMEZONE"),
        ({"CASINO_WAR_CORS_ALLOWED_ORIGINS": "not json"}, "CASINO_WAR_CORS_ALLOWED_ORIGINS"),
        ({"CASINO_WAR_GAMING_DAY_TIMEZONE": "America"}, "CASINO_WAR_GAMING_DAY_TIMEZONE"),
        ({"CASINO_WAR_DATABASE_URL": "postgresql://u@db:notaport/casino"}, "not a database URL"),
    ],
    ids=[
        "bad-hour",
        "mysql-url",
        "unreachable-postgresql",
        "unknown-postgresql-host",
        "sqlite-folder-missing",
        "unknown-time-zone",
        "list-setting-not-json",
        "a-folder-of-time-zones",
        "a-port-that-is-not-a-number",
    ],
)
def test_a_configuration_error_is_one_line_and_exit_2(
    setting: dict[str, str], says: str, tmp_path: Path
) -> None:
    result = _run(*CLI, "db", "upgrade", env=setting, cwd=tmp_path)
    assert result.returncode == 2
    (line,) = result.stderr.strip().splitlines()
    assert says in line and "Traceback" not in result.stderr
    debug = _run(*CLI, "--debug", "db", "upgrade", env=setting, cwd=tmp_path)
    assert "Traceback" in debug.stderr


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("mysql://casino:s3cret-pw@db/casino", "casino:***@db"),
        ("postgresql://casino:s3cret-pw@db:notaport/casino", "an unparseable URL"),
    ],
    ids=["another-database", "a-port-that-is-not-a-number"],
)
def test_a_refused_database_url_is_shown_without_its_password(
    url: str, shown: str, tmp_path: Path
) -> None:
    result = _run(*CLI, "db", "upgrade", env={"CASINO_WAR_DATABASE_URL": url}, cwd=tmp_path)
    assert result.returncode == 2
    assert "s3cret-pw" not in result.stderr and shown in result.stderr


def test_a_busy_port_is_one_line_and_exit_2(tmp_path: Path) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        result = _run(*CLI, "serve", "--port", str(port), cwd=tmp_path)
    assert result.returncode == 2
    assert "already in use" in result.stderr and "Traceback" not in result.stderr


def test_a_host_not_of_this_machine_is_one_line_and_exit_2(tmp_path: Path) -> None:
    result = _run(*CLI, "serve", "--host", "203.0.113.7", "--port", str(free_port()), cwd=tmp_path)
    assert result.returncode == 2
    assert "not one of this machine's" in result.stderr and "Traceback" not in result.stderr


def test_a_host_name_that_does_not_resolve_is_one_line_and_exit_2(tmp_path: Path) -> None:
    port = str(free_port())
    result = _run(*CLI, "serve", "--host", "nosuch.invalid", "--port", port, cwd=tmp_path)
    assert result.returncode == 2
    assert "cannot resolve" in result.stderr and "Traceback" not in result.stderr


def test_uvicorn_on_a_database_not_yet_migrated_says_what_to_run(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'fresh.db'}"
    env = {"CASINO_WAR_DATABASE_URL": url}
    refused = _run(sys.executable, "-m", "uvicorn", "api.asgi:app", "--port", "1", env=env)
    assert refused.returncode == 2
    assert "casino-war db upgrade" in refused.stderr and "Traceback" not in refused.stderr


def test_litestar_run_on_a_database_not_yet_migrated_says_what_to_run(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'fresh.db'}"
    env = {"CASINO_WAR_DATABASE_URL": url}
    litestar = Path(sys.executable).parent / "litestar"
    refused = _run(str(litestar), "--app", "api.asgi:app", "run", "--port", "1", env=env)
    assert refused.returncode == 2
    assert "casino-war db upgrade" in refused.stderr and "Traceback" not in refused.stderr


def test_uvicorn_serves_a_migrated_database(database_url: str) -> None:
    port = free_port()
    env = {**os.environ, "CASINO_WAR_DATABASE_URL": database_url}
    process = subprocess.Popen(
        [sys.executable, "-m", "uvicorn", "api.asgi:app", "--port", str(port)],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"http://127.0.0.1:{port}/ready", timeout=1).status_code == 200:
                    return
            except httpx.HTTPError:
                time.sleep(0.2)
        pytest.fail("uvicorn did not serve the app")
    finally:
        process.terminate()
        process.wait(timeout=15)
