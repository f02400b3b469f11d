"""Where each design goal stands, from a run's figures and ratios."""

import operator
from collections.abc import Callable
from typing import Any

from benchmarks.report import DATABASES, GOAL_CLIENTS, curve_value

COMPARISONS: dict[str, Callable[[float, float], bool]] = {
    "<=": operator.le,
    "<": operator.lt,
    ">=": operator.ge,
}


def _goal(
    name: str, target: str, measured: float | None, detail: str | None = None
) -> dict[str, Any]:
    """A goal and where it stands; `target` is "<= x", "< x" or ">= x" (a number after)."""
    comparison, limit = target.split()[:2]
    result = {
        "goal": name,
        "target": target,
        "measured": measured,
        "met": None if measured is None else COMPARISONS[comparison](measured, float(limit)),
    }
    if detail is not None:
        result["detail"] = detail
    return result


def _best_audit_rate(audit: dict[str, Any]) -> tuple[float | None, str | None]:
    """The better of the single-process and the parallel audit at the largest size, and
    which it was: the goal is the audit's throughput however it is run."""
    if not audit.get("sizes"):
        return None, None
    size, point = list(audit["sizes"].items())[-1]
    single, parallel = point["hands_per_second"], point.get("hands_per_second_parallel")
    if parallel is not None and parallel > single:
        return parallel, f"parallel, {point['jobs']} processes, at {size} hands"
    return single, f"single process, at {size} hands"


def _history_detail(document: dict[str, Any], db: str) -> str | None:
    history = document.get("history", {}).get(db) or {}
    if not history.get("available"):
        return None
    settings = document["settings"]
    shortened = (
        "" if document["mode"] == "full" else f" ({document['mode']} run: the goal is at 100,000)"
    )
    return (
        f"{history['hands']:,} hands of history, {settings['history_clients']} clients, "
        f"server and database CPU{shortened}"
    )


def _instructions_detail(document: dict[str, Any]) -> str | None:
    """The served SQLite hand's user-space instructions against a do-nothing request's,
    where a full run counted them: a figure beside the goal's that the host's speed and its
    other tenants barely move."""
    counted = document.get("served_instructions")
    if counted is None:
        return None
    return f"user-space instructions (callgrind): {counted['hot_path_vs_noop']}x"


def goals(document: dict[str, Any]) -> list[dict[str, Any]]:
    """Where each design goal stands (informative: nothing fails on a missed goal).

    Issue 16's goals first, each at 8 clients: a hand's server CPU against a do-nothing
    request's (on SQLite with the same in user-space instructions, where counted), hands/s
    against do-nothing requests/s, p99, then a hand's CPU after history against on a fresh
    database, then the audit's; then the earlier goals still watched.
    """
    r = document["ratios"]
    history_clients = str(document["settings"]["history_clients"])
    items = []
    for db, cpu_limit, rate_limit in (("sqlite", 4, 0.5), ("postgresql", 5, 0.3)):
        items += [
            _goal(
                f"{db}_server_cpu_per_hand_vs_noop_at_8_clients",
                f"<= {cpu_limit}",
                r[f"{db}_server_cpu_per_hand_vs_noop_request"].get(GOAL_CLIENTS),
                _instructions_detail(document) if db == "sqlite" else None,
            ),
            _goal(
                f"{db}_hands_vs_noop_at_8_clients",
                f">= {rate_limit}",
                r[f"{db}_hands_vs_noop_requests"].get(GOAL_CLIENTS),
            ),
            _goal(
                f"{db}_p99_ms_at_8_clients",
                "< 50",
                curve_value(document["http"].get(db), GOAL_CLIENTS, "p99_ms"),
            ),
        ]
    for db in DATABASES:
        items.append(
            _goal(
                f"{db}_cpu_per_hand_history_vs_fresh",
                "<= 1.1",
                r[f"{db}_cpu_per_hand_history_vs_fresh"].get(history_clients),
                _history_detail(document, db),
            )
        )
    audit = document["audit"]
    audit_rate, audit_how = _best_audit_rate(audit)
    items.append(_goal("audit_hands_per_second", ">= 50000", audit_rate, audit_how))
    items.append(
        _goal(
            "postgresql_hands_vs_pgbench_at_8_clients",
            ">= 0.5",
            r["postgresql_hands_vs_pgbench_tps"].get(GOAL_CLIENTS),
        )
    )
    items.append(
        _goal(
            "audit_memory_growth_largest_vs_smallest",
            "<= 1.5 (flat)",
            audit.get("memory_growth"),
        )
    )
    return items
