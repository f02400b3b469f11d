"""Servers the benchmark starts as subprocesses on free loopback ports, and always stops."""

import functools
import os
import re
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx

from api.server import SERVING_WITH

READY_TIMEOUT_SECONDS = 90.0
READY_POLL_SECONDS = 0.05
ROOT = Path(__file__).resolve().parent.parent
_SERVING_WITH = re.compile(re.escape(SERVING_WITH).replace("%s", r"(\S+)"))


@functools.cache
def tls_context() -> ssl.SSLContext:
    """One TLS context for every httpx client of the run, passed as its `verify`.

    The benchmark speaks plain HTTP on loopback, yet httpx builds a context and loads the CA
    bundle for each client it creates, which costs real CPU. With a client per simulated
    player and one per readiness poll, that added up to a large share of every quick run,
    spent between the measured windows and, while a server started, taken from the CPU it
    was starting on. Shared, the context is built once and a new client costs next to
    nothing.
    """
    return ssl.create_default_context()


@dataclass(frozen=True, slots=True)
class Server:
    """A launched server process; `wait_ready` before sending it any load."""

    base_url: str
    pid: int
    process: "subprocess.Popen[bytes]"
    ready_url: str
    log: Path

    def wait_ready(self) -> None:
        """Return once the server answers its readiness URL (raise if it exits first)."""
        _wait_ready(self.process, self.ready_url, self.log)

    def served_with(self) -> dict[str, str | None]:
        """The event loop and HTTP parser the server said, in its log, it runs on."""
        return served_with(self.log.read_text(errors="replace"))


def served_with(log: str) -> dict[str, str | None]:
    """The event loop and HTTP parser named in a server's log (`api.server.serve` logs them
    at start-up); None each if it did not say."""
    found = _SERVING_WITH.search(log)
    return {"loop": found[1] if found else None, "http": found[2] if found else None}


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def casino_war_command() -> list[str]:
    """The installed `casino-war` script next to this interpreter, else `python -m api.cli`."""
    script = shutil.which("casino-war", path=str(Path(sys.executable).parent))
    return [script] if script else [sys.executable, "-m", "api.cli"]


@contextmanager
def launched(command: Sequence[str], env: dict[str, str], ready_path: str) -> Iterator[Server]:
    """Start `command` (which must take --host/--port/--workers already); stop it on exit.

    It is not waited for here: a server takes a while to import its code, mostly on one CPU,
    and the caller can start another or import its own modules meanwhile; it calls
    `Server.wait_ready` before loading it.
    """
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
        yield Server(base_url, process.pid, process, base_url + ready_path, Path(log.name))
    finally:
        _stop(process)
        log.close()


def _wait_ready(process: "subprocess.Popen[bytes]", url: str, log: Path) -> None:
    """Poll `url` until it answers 200, from one client (a new connection per refused try)."""
    deadline = time.monotonic() + READY_TIMEOUT_SECONDS
    with httpx.Client(timeout=1.0, verify=tls_context()) as client:
        while time.monotonic() < deadline:
            if process.poll() is not None:
                raise RuntimeError(f"server exited with {process.returncode}: {_tail(log)}")
            try:
                if client.get(url).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(READY_POLL_SECONDS)
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
    with launched(command, {"CASINO_WAR_DATABASE_URL": database_url}, "/ready") as server:
        yield server


@contextmanager
def noop(workers: int) -> Iterator[Server]:
    """The do-nothing Litestar app under uvicorn, run the way `casino-war serve` runs: by
    `api.server.serve`, on the same event loop and HTTP parser."""
    command = [sys.executable, "-m", "benchmarks.noop_app", "--workers", str(workers)]
    with launched(command, {}, "/ready") as server:
        yield server
