"""A PostgreSQL server of the test's own, which it may stop and restart at will without
touching the shared one: initdb into a temporary folder, run as the `postgres` user."""

import glob
import os
import shutil
import socket
import subprocess
import tempfile
import time
from contextlib import suppress
from pathlib import Path

from tests.ports import free_port


def _binaries() -> Path | None:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    return Path(found[-1]).parent if found else None


class PrivatePostgres:
    """Why it cannot run, or a server: `start`, `restart`, `stop`, and its `url`."""

    def __init__(self) -> None:
        self.binaries = _binaries()
        self.port = free_port()
        self.folder = Path(tempfile.mkdtemp(prefix="casino-war-pg-"))
        self.data = self.folder / "data"

    def unavailable(self) -> str | None:
        if self.binaries is None:
            return "PostgreSQL's server binaries (initdb, pg_ctl) are not installed"
        if os.geteuid() == 0 and shutil.which("runuser") is None:
            return "running as root without runuser to become the postgres user"
        return None

    @property
    def url(self) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/postgres"

    def _run(self, *argv: str) -> None:
        command = [str(self.binaries / argv[0]), *argv[1:]] if self.binaries else list(argv)
        if os.geteuid() == 0:
            command = ["runuser", "-u", "postgres", "--", *command]
        subprocess.run(command, check=True, capture_output=True, timeout=60)

    def start(self) -> None:
        if os.geteuid() == 0:
            shutil.chown(self.folder, "postgres")
        if not self.data.exists():
            self._run("initdb", "-D", str(self.data), "-U", "postgres", "--auth=trust")
        self._run(
            "pg_ctl", "-D", str(self.data), "-l", str(self.folder / "log"), "-w",
            "-o", f"-p {self.port} -k {self.folder} -c listen_addresses=127.0.0.1", "start",
        )  # fmt: skip

    def stop(self) -> None:
        self._run("pg_ctl", "-D", str(self.data), "-m", "fast", "-w", "stop")

    def wait_until_up(self, seconds: float = 30) -> None:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return
            except OSError:
                time.sleep(0.1)
        raise RuntimeError("the private PostgreSQL did not come back")

    def remove(self) -> None:
        with suppress(subprocess.CalledProcessError):
            self.stop()
        shutil.rmtree(self.folder, ignore_errors=True)
