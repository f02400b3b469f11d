"""CPU meters read the processes a load point runs on, from /proc: what a request costs
each of them. Linux only, as the benchmark's CI is; elsewhere they read None."""

import os
import subprocess
import sys
import time
from collections.abc import Callable
from subprocess import Popen
from typing import Literal

import pytest

from benchmarks import cpu

pytestmark = pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs Linux /proc")

_BUSY = "import time\nend = time.process_time() + 0.3\nwhile time.process_time() < end: pass\n"


def test_a_process_group_meter_counts_the_cpu_its_processes_spend() -> None:
    child = subprocess.Popen(
        [sys.executable, "-c", _BUSY + "time.sleep(30)"], start_new_session=True
    )
    try:
        meter = cpu.process_group(child.pid)
        deadline = time.monotonic() + 20
        spent = meter()
        while spent is not None and spent < 0.3 and time.monotonic() < deadline:
            time.sleep(0.05)
            spent = meter()
        assert spent is not None and spent >= 0.3
    finally:
        child.kill()
        child.wait()


def test_a_process_group_meter_keeps_the_cpu_of_a_process_that_ended() -> None:
    """A worker (or a PostgreSQL backend) ending inside a window must not take its CPU
    away: once its parent has waited for it, the parent counts it."""
    waits_for_a_busy_child = (
        "import subprocess, sys, time\n"
        f"subprocess.run([sys.executable, '-c', {_BUSY!r}])\n"
        "print('ended', flush=True)\n"
        "time.sleep(30)\n"
    )
    leader = subprocess.Popen(
        [sys.executable, "-c", waits_for_a_busy_child],
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        assert leader.stdout is not None and leader.stdout.readline() == "ended\n"
        spent = cpu.process_group(leader.pid)()
        assert spent is not None and spent >= 0.3
    finally:
        leader.kill()
        leader.wait()


def test_a_process_group_meter_leaves_out_other_groups() -> None:
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:  # same group as this process: a meter of a group of its own sees nothing of it
        assert cpu.process_group(child.pid)() == 0
    finally:
        child.kill()
        child.wait()


def test_the_load_generator_meter_grows_with_work_in_this_process() -> None:
    before = cpu.this_process()
    end = time.process_time() + 0.05
    while time.process_time() < end:
        pass
    assert cpu.this_process() >= before + 0.04


_BUSY_THREAD = _BUSY.replace("process_time", "thread_time")
"""0.3 s of the CPU of the thread that runs it."""


def _spending(in_thread: Literal["main", "worker"]) -> Popen[bytes]:
    """A process that spends 0.3 s of CPU in its main thread or in another; both threads
    then sleep until the test ends it."""
    busy, idle = _BUSY_THREAD + "time.sleep(30)\n", "time.sleep(30)\n"
    worker, main = (busy, idle) if in_thread == "worker" else (idle, busy)
    return _started(worker, main)


def _spending_in_a_thread_that_ends() -> Popen[bytes]:
    """A process whose second thread spends 0.3 s of CPU and ends, its main thread asleep."""
    return _started(_BUSY_THREAD, "time.sleep(30)\n")


def _started(worker: str, main: str) -> Popen[bytes]:
    script = (
        f"import threading, time\nthreading.Thread(target=exec, args=({worker!r},)).start()\n"
        + main
    )
    return subprocess.Popen([sys.executable, "-c", script], start_new_session=True)


def _reading_at_least(meter: cpu.Meter, seconds: float) -> float | None:
    deadline = time.monotonic() + 20
    spent = meter()
    while spent is not None and spent < seconds and time.monotonic() < deadline:
        time.sleep(0.05)
        spent = meter()
    return spent


@pytest.mark.parametrize(
    ("in_thread", "counted", "left_out"),
    [
        ("worker", cpu.worker_threads, cpu.event_loop_threads),
        ("main", cpu.event_loop_threads, cpu.worker_threads),
    ],
)
def test_the_thread_meters_split_a_servers_cpu_between_its_main_threads_and_the_others(
    in_thread: Literal["main", "worker"],
    counted: Callable[[int], cpu.Meter],
    left_out: Callable[[int], cpu.Meter],
) -> None:
    child = _spending(in_thread)
    try:
        # /proc counts a thread's CPU in clock ticks, sampled: a tick or two either way.
        spent = _reading_at_least(counted(child.pid), 0.25)
        assert spent is not None and spent >= 0.25
        other = left_out(child.pid)()
        assert other is not None and other < 0.1
    finally:
        child.kill()
        child.wait()


def test_the_worker_threads_meter_keeps_the_cpu_of_a_thread_that_ended() -> None:
    child = _spending_in_a_thread_that_ends()
    try:
        spent = _reading_at_least(cpu.worker_threads(child.pid), 0.25)
        assert spent is not None and spent >= 0.25
        deadline = time.monotonic() + 20
        while len(os.listdir(f"/proc/{child.pid}/task")) > 1 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert os.listdir(f"/proc/{child.pid}/task") == [str(child.pid)]  # it has ended
        still = cpu.worker_threads(child.pid)()
        assert still is not None and still >= spent
    finally:
        child.kill()
        child.wait()
