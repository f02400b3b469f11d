"""Drive the real app over HTTP (Litestar's test client) on a real, fresh database."""

import asyncio
import itertools
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvloop
from litestar import Litestar
from litestar.testing import TestClient
from sqlalchemy import Engine, event

from api.app import create_app
from api.db.database import Database
from api.domain.tokens.service import Role, issue_token
from api.settings import Settings
from tests.ports import free_port

_keys = itertools.count()


@contextmanager
def counting_connections(engine: Engine) -> Iterator[list[object]]:
    """The DBAPI connections `engine` opens while the block runs."""
    opened: list[object] = []

    def _opened(dbapi_connection: object, _record: object) -> None:
        opened.append(dbapi_connection)

    event.listen(engine, "connect", _opened)
    try:
        yield opened
    finally:
        event.remove(engine, "connect", _opened)


def new_key() -> str:
    return f"test-key-{next(_keys)}"


@dataclass
class Caller:
    """A client holding one bearer token; `post` sends a fresh Idempotency-Key by default."""

    client: TestClient[Litestar]
    token: str

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"}

    def get(self, path: str, **params: Any) -> httpx.Response:
        return self.client.get(path, headers=self.headers, params=params)

    def post(self, path: str, json: Any = None, *, key: str | None = "new") -> httpx.Response:
        headers = dict(self.headers)
        if key is not None:
            headers["Idempotency-Key"] = new_key() if key == "new" else key
        return self.client.post(path, json=json, headers=headers)


NewLoop = Callable[[], asyncio.AbstractEventLoop]


@pytest.fixture(params=["asyncio", "uvloop"])
def new_loop(request: pytest.FixtureRequest) -> NewLoop:
    """A new event loop: the server's uvloop, and asyncio's own (the test client's). They
    call a socket's reader differently (`api.db.loop_waits`): uvloop closes one whose
    socket reports an error, asyncio's may call one more time for readiness it found before
    the woken wait read its answer."""
    return uvloop.new_event_loop if request.param == "uvloop" else asyncio.new_event_loop


@pytest.fixture
def settings(database_url: str) -> Settings:
    return Settings(database_url=database_url)


@pytest.fixture
def client(settings: Settings) -> Iterator[TestClient[Litestar]]:
    with TestClient(app=create_app(settings)) as test_client:
        yield test_client


def issue_test_token(settings: Settings, role: Role) -> str:
    database = Database.connect(settings.database_url)
    try:
        with database.transaction() as session:
            return issue_token(session, role, name=f"test {role}")
    finally:
        database.dispose()


@pytest.fixture
def operator(client: TestClient[Litestar], settings: Settings) -> Caller:
    return Caller(client, issue_test_token(settings, Role.OPERATOR))


@pytest.fixture
def auditor(client: TestClient[Litestar], settings: Settings) -> Caller:
    return Caller(client, issue_test_token(settings, Role.AUDITOR))


def new_player(operator: Caller, deposit: int = 0, currency: str = "USD") -> tuple[Caller, int]:
    created = operator.post("/v1/players", {"display_name": "Ada"})
    assert created.status_code == 201, created.text
    body = created.json()
    if deposit:
        paid = operator.post(
            "/v1/cashier/deposits",
            {"player_id": body["id"], "amount": deposit, "currency": currency},
        )
        assert paid.status_code == 201, paid.text
    return Caller(operator.client, body["token"]), body["id"]


@pytest.fixture
def player(operator: Caller) -> Caller:
    return new_player(operator, deposit=100_000)[0]


def standard_table_id(caller: Caller) -> int:
    tables = caller.get("/v1/tables").json()["items"]
    return next(int(t["id"]) for t in tables if t["name"] == "standard")


def available(caller: Caller, currency: str = "USD") -> int:
    balances = caller.get("/v1/me").json()["balances"]
    return next(int(b["available"]) for b in balances if b["currency"] == currency)


def play_until(player: Caller, table_id: int, status: str, bet: int = 100) -> dict[str, Any]:
    """Open hands until one ends in `status` (settled first deal, or a tie awaiting decision)."""
    for _ in range(500):
        response = player.post("/v1/hands", {"table_id": table_id, "bet": bet})
        assert response.status_code == 201, response.text
        hand: dict[str, Any] = response.json()
        if hand["status"] == status:
            return hand
        if hand["status"] == "awaiting_decision":
            player.post(f"/v1/hands/{hand['id']}/decision", {"action": "surrender"})
    raise AssertionError(f"no hand ended {status} in 500 tries")


class LiveServer:
    """`casino-war serve` in a subprocess on a free loopback port: restartable, multi-worker."""

    def __init__(self, database_url: str, workers: int) -> None:
        self.database_url = database_url
        self.workers = workers
        self.port = free_port()
        self.base_url = f"http://127.0.0.1:{self.port}"
        self._process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        env = {**os.environ, "CASINO_WAR_DATABASE_URL": self.database_url}
        self._process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "api.cli",
                "serve",
                "--port",
                str(self.port),
                "--workers",
                str(self.workers),
            ],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"{self.base_url}/ready", timeout=1).status_code == 200:
                    return
            except httpx.HTTPError:
                time.sleep(0.2)
        self.stop()
        raise RuntimeError("the server did not become ready in 30 s")

    def stop(self) -> None:
        if self._process is not None:
            self._process.send_signal(signal.SIGTERM)
            try:
                self._process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()
            self._process = None

    def token(self, role: Role) -> str:
        return issue_test_token(Settings(database_url=self.database_url), role)

    def worker_pids(self) -> list[int]:
        """The live worker processes serving requests: the supervisor's children that
        multiprocessing spawned (not its resource tracker, nor a worker dead and unreaped)."""
        assert self._process is not None
        found = subprocess.run(
            ["pgrep", "-P", str(self._process.pid)], capture_output=True, text=True, check=False
        )
        return [int(pid) for pid in found.stdout.split() if _is_live_worker(int(pid))]


def _is_live_worker(pid: int) -> bool:
    try:
        command = Path(f"/proc/{pid}/cmdline").read_bytes()
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:  # gone meanwhile
        return False
    return b"spawn_main" in command and state != "Z"


@pytest.fixture
def live_server(database_url: str) -> Iterator[LiveServer]:
    server = LiveServer(database_url, workers=2)
    server.start()
    yield server
    server.stop()
