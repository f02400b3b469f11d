"""The benchmark's own machinery, without servers: how phases hand over, and the plans' sizes.

Fast checks next to `test_quick_run.py` (which runs everything on tiny sizes): a teardown left
running in the background must be finished before the next measurement, and must not swallow
its errors; the quick plan must still exercise what it claims to.
"""

import threading
import time
from contextlib import ExitStack
from pathlib import Path

import pytest

from benchmarks.plan import FULL, QUICK, TINY, Plan
from benchmarks.runner import Handover, _audit_instructions, _served_instructions


def test_a_released_phase_closes_in_the_background_and_settle_waits_for_it() -> None:
    closing_may_finish = threading.Event()
    closed: list[str] = []

    def close() -> None:
        closing_may_finish.wait(timeout=5)
        closed.append("server")

    resources = ExitStack()
    resources.callback(close)
    handover = Handover()
    handover.release(resources)
    assert closed == []  # the caller goes on while the resources close
    closing_may_finish.set()
    handover.settle()
    assert closed == ["server"]


def test_releasing_again_first_waits_for_the_previous_phase() -> None:
    order: list[str] = []

    def close_first() -> None:
        time.sleep(0.05)
        order.append("first")

    first, second = ExitStack(), ExitStack()
    first.callback(close_first)
    second.callback(order.append, "second")
    handover = Handover()
    handover.release(first)
    handover.release(second)
    handover.settle()
    assert order == ["first", "second"]


def test_a_failure_while_closing_is_raised_by_settle_once() -> None:
    def fail() -> None:
        raise RuntimeError("server did not stop")

    resources = ExitStack()
    resources.callback(fail)
    handover = Handover()
    handover.release(resources)
    with pytest.raises(RuntimeError, match="did not stop"):
        handover.settle()
    handover.settle()  # reported once; nothing left to wait for


def test_what_is_released_after_a_failure_is_still_closed() -> None:
    closed: list[str] = []

    def fail() -> None:
        raise RuntimeError("server did not stop")

    failing, next_phase = ExitStack(), ExitStack()
    failing.callback(fail)
    next_phase.callback(closed.append, "next phase")
    handover = Handover()
    handover.release(failing)
    with pytest.raises(RuntimeError, match="did not stop"):
        handover.release(next_phase)
    handover.settle()
    assert closed == ["next phase"]


def test_settle_with_nothing_released_returns_at_once() -> None:
    Handover().settle()


def test_full_mode_keeps_the_documented_sizes() -> None:
    """docs/performance.md states these; a quick-mode change must not move them."""
    assert (FULL.duration_seconds, FULL.warmup_seconds) == (10.0, 2.0)
    assert FULL.clients == (1, 8, 32)
    assert (FULL.sqlite_workers, FULL.postgresql_workers) == (1, 2)
    assert FULL.ledger_seconds == 3.0
    assert FULL.audit_sizes == (25_000, 50_000, 100_000) and FULL.audit_chunk is None
    assert FULL.simulation_hands == 200_000
    assert FULL.pgbench_scale == 8
    assert FULL.audit_instruction_hands == 1_000
    assert FULL.served_instruction_hands == (200, 600)
    assert (FULL.history_hands, FULL.history_clients) == (100_000, 8)
    assert FULL.cashier_amount == 100


def test_quick_mode_leaves_the_instruction_count_to_full_runs() -> None:
    """Two counts of the audit under valgrind take about 35 s, four of served requests
    minutes: a quick run would no longer end within its minute."""
    assert QUICK.audit_instruction_hands is None
    assert QUICK.served_instruction_hands is None


def test_quick_mode_measures_the_same_points_and_still_uses_the_audit_pool() -> None:
    assert QUICK.clients == FULL.clients
    assert (QUICK.sqlite_workers, QUICK.postgresql_workers) == (1, 2)
    assert QUICK.pgbench_scale == FULL.pgbench_scale
    assert len(QUICK.audit_sizes) == len(FULL.audit_sizes)
    assert QUICK.audit_chunk is not None
    # Every size makes several chunks, so the parallel figures go through worker processes.
    assert all(size >= 2 * QUICK.audit_chunk for size in QUICK.audit_sizes)


def test_quick_mode_measures_the_history_point_over_a_short_history_at_the_same_clients() -> None:
    """Filling 100,000 hands takes minutes per database; the quick run says it used fewer."""
    assert QUICK.history_hands == 2_000
    assert QUICK.history_clients == FULL.history_clients


@pytest.mark.parametrize("plan", [FULL, QUICK, TINY], ids=lambda plan: plan.mode)
def test_the_history_point_is_one_the_fresh_curve_measures(plan: Plan) -> None:
    assert plan.history_clients in plan.clients


def test_without_valgrind_the_instruction_count_is_reported_unavailable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # a PATH with no valgrind on it
    unavailable: list[str] = []
    assert _audit_instructions("sqlite:///never-opened.db", FULL, unavailable) is None
    assert unavailable == [
        "the audit's instructions were not counted: "
        "valgrind is not installed (Debian package valgrind)"
    ]


def test_without_valgrind_the_served_instructions_are_reported_unavailable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # a PATH with no valgrind on it
    unavailable: list[str] = []
    assert _served_instructions(FULL, unavailable) is None
    assert unavailable == [
        "the served instructions were not counted: "
        "valgrind is not installed (Debian package valgrind)"
    ]


def test_a_run_without_sqlite_counts_no_served_instructions() -> None:
    unavailable: list[str] = []
    assert _served_instructions(FULL.with_databases(("postgresql",)), unavailable) is None
    assert unavailable == []
