"""Servers the benchmark starts as subprocesses on free loopback ports, and always stops."""

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx

READY_TIMEOUT_SECONDS = 90.0
ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True, slots=True)
class Server:
    base_url: str
    pid: int


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def casino_war_command() -> list[str]:
    """The installed `casino-war` script next to this interpreter, else `python -m api.cli`."""
    script = shutil.which("casino-war", path=str(Path(sys.executable).parent))
    return [script] if script else [sys.executable, "-m", "api.cli"]


@contextmanager
def running(command: Sequence[str], env: dict[str, str], ready_path: str) -> Iterator[Server]:
    """Start `command` (which must take --host/--port/--workers already), wait for readiness."""
    port = free_port()
    log = tempfile.NamedTemporaryFile(prefix="casino-war-bench-server-", suffix=".log")  # noqa: SIM115
    process = subprocess.Popen(
        [*command, "--host", "127.0.0.1", "--port", str(port)],
        env={**os.environ, **env},
        cwd=ROOT,
        stdin=subprocess.DEVNULL,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,  # its own process group: workers are stopped with it
    )
    base_url = f"http://127.0.0.1:{port}"
    try:
        _wait_ready(process, base_url + ready_path, Path(log.name))
        yield Server(base_url, process.pid)
    finally:
        _stop(process)
        log.close()


def _wait_ready(process: "subprocess.Popen[bytes]", url: str, log: Path) -> None:
    deadline = time.monotonic() + READY_TIMEOUT_SECONDS
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"server exited with {process.returncode}: {_tail(log)}")
        try:
            if httpx.get(url, timeout=1.0).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    raise RuntimeError(f"server not ready after {READY_TIMEOUT_SECONDS} s: {_tail(log)}")


def _tail(log: Path) -> str:
    return log.read_text(errors="replace")[-2000:]


def _stop(process: "subprocess.Popen[bytes]") -> None:
    """SIGTERM the server's process group (uvicorn stops its workers), then SIGKILL if stuck."""
    if process.poll() is None:
        try:
            os.killpg(process.pid, signal.SIGTERM)
        except ProcessLookupError:
            return
    try:
        process.wait(timeout=15)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()


@contextmanager
def casino_war(database_url: str, workers: int) -> Iterator[Server]:
    """`casino-war serve` on its own database (it migrates it first, as in production)."""
    command = [*casino_war_command(), "serve", "--workers", str(workers)]
    with running(command, {"CASINO_WAR_DATABASE_URL": database_url}, "/ready") as server:
        yield server


@contextmanager
def noop(workers: int) -> Iterator[Server]:
    """The do-nothing Litestar app under uvicorn, run the way `casino-war serve` runs."""
    command = [sys.executable, "-m", "benchmarks.noop_app", "--workers", str(workers)]
    with running(command, {}, "/ready") as server:
        yield server
