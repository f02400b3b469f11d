"""How load points become ratios (`benchmarks.report`) and where each goal stands
(`benchmarks.goals`): on made-up figures, no servers."""

from typing import Any

import pytest

from benchmarks.goals import goals
from benchmarks.report import ratios
from benchmarks.servers import served_with


def _point(units_per_second: float, server_cpu_ms: float, **cpu: float) -> dict[str, Any]:
    return {
        "hands_per_second": units_per_second,
        "deposits_per_second": units_per_second,
        "requests_per_second": units_per_second,
        "latency_ms": {"p50": 10.0, "p99": 40.0},
        "cpu_ms_per_unit": {"server": server_cpu_ms, **cpu},
    }


def _curve(point: dict[str, Any]) -> dict[str, Any]:
    return {"available": True, "points": {"8": point}}


def _missing() -> dict[str, Any]:
    return {"available": False, "reason": "not here", "points": {}}


def _document(hand: dict[str, Any], history: dict[str, Any], mode: str = "full") -> dict[str, Any]:
    """SQLite measured (a do-nothing request at 1,000/s for 0.5 ms of server CPU), PostgreSQL
    not; the audit at 60,000 hands/s."""
    document = {
        "mode": mode,
        "settings": {"history_clients": 8},
        "http": {"sqlite": _curve(hand), "postgresql": _missing()},
        "deposits": {"sqlite": _curve(_point(400.0, 1.0)), "postgresql": _missing()},
        "history": {
            "sqlite": {"available": True, "hands": 100_000, "point": history},
            "postgresql": _missing(),
        },
        "limits": {
            "pgbench": _missing(),
            "sqlite_raw": _missing(),
            "noop_http": {"sqlite": _curve(_point(1_000.0, 0.5)), "postgresql": _missing()},
        },
        "ledger": {"sqlite": None, "postgresql": None},
        "audit": {
            "sizes": {"100000": {"hands_per_second": 60_000.0, "hands_per_second_parallel": None}},
            "memory_growth": 1.0,
        },
    }
    document["ratios"] = ratios(document, ["8"])
    return document


def _goal(document: dict[str, Any], name: str) -> dict[str, Any]:
    (goal,) = [goal for goal in goals(document) if goal["goal"] == name]
    return goal


def test_a_hands_server_cpu_is_reported_as_a_multiple_of_a_do_nothing_requests() -> None:
    document = _document(_point(500.0, 2.0), _point(500.0, 2.0))
    assert document["ratios"]["sqlite_server_cpu_per_hand_vs_noop_request"] == {"8": 4.0}
    assert document["ratios"]["sqlite_hands_vs_noop_requests"] == {"8": 0.5}


def test_a_deposit_is_compared_with_a_do_nothing_request_the_same_way() -> None:
    document = _document(_point(500.0, 2.0), _point(500.0, 2.0))
    assert document["ratios"]["sqlite_server_cpu_per_deposit_vs_noop_request"] == {"8": 2.0}
    assert document["ratios"]["sqlite_deposits_vs_noop_requests"] == {"8": 0.4}


def test_the_history_ratio_counts_the_databases_cpu_with_the_servers() -> None:
    fresh = _point(500.0, 2.0, database=1.0)
    after_history = _point(450.0, 2.0, database=1.5)
    document = _document(fresh, after_history)
    assert document["ratios"]["sqlite_cpu_per_hand_history_vs_fresh"] == {"8": 1.167}
    assert document["ratios"]["sqlite_server_cpu_per_hand_history_vs_fresh"] == {"8": 1.0}


def test_the_load_generators_own_history_ratio_shows_how_the_host_moved() -> None:
    fresh = _point(500.0, 2.0, load_generator=1.0)
    after_history = _point(450.0, 2.4, load_generator=1.2)
    document = _document(fresh, after_history)
    assert document["ratios"]["sqlite_server_cpu_per_hand_history_vs_fresh"] == {"8": 1.2}
    assert document["ratios"]["sqlite_load_generator_cpu_per_hand_history_vs_fresh"] == {"8": 1.2}


def test_a_goal_at_its_limit_is_met_and_one_beyond_it_is_not() -> None:
    at_limit = _document(_point(500.0, 2.0), _point(500.0, 2.2))
    beyond = _document(_point(499.0, 2.1), _point(500.0, 2.5))
    for name in (
        "sqlite_server_cpu_per_hand_vs_noop_at_8_clients",
        "sqlite_hands_vs_noop_at_8_clients",
        "sqlite_cpu_per_hand_history_vs_fresh",
    ):
        assert _goal(at_limit, name)["met"] is True, name
        assert _goal(beyond, name)["met"] is False, name


def test_a_goal_not_measured_is_neither_met_nor_missed() -> None:
    document = _document(_point(500.0, 2.0), _point(500.0, 2.0))
    goal = _goal(document, "postgresql_server_cpu_per_hand_vs_noop_at_8_clients")
    assert (goal["target"], goal["measured"], goal["met"]) == ("<= 5", None, None)


def test_the_audit_goal_is_met_at_fifty_thousand_hands_per_second() -> None:
    goal = _goal(_document(_point(500.0, 2.0), _point(500.0, 2.0)), "audit_hands_per_second")
    assert goal["met"] is True
    assert goal["detail"] == "single process, at 100000 hands"


@pytest.mark.parametrize(
    ("mode", "note"), [("full", ""), ("quick", " (quick run: the goal is at 100,000)")]
)
def test_the_history_goal_says_how_much_history_and_when_it_was_short(mode: str, note: str) -> None:
    document = _document(_point(500.0, 2.0), _point(500.0, 2.0), mode)
    detail = _goal(document, "sqlite_cpu_per_hand_history_vs_fresh")["detail"]
    assert detail == f"100,000 hands of history, 8 clients, server and database CPU{note}"


def test_the_loop_and_http_parser_are_read_from_the_servers_log() -> None:
    log = "INFO:     serving with loop=uvloop http=httptools\nINFO:     Started parent process"
    assert served_with(log) == {"loop": "uvloop", "http": "httptools"}
    assert served_with("INFO:     Started server process") == {"loop": None, "http": None}


def test_the_sqlite_cpu_goal_names_the_instruction_ratio_where_it_was_counted() -> None:
    document = _document(_point(500.0, 2.0), _point(500.0, 2.0))
    document["served_instructions"] = {"hot_path_vs_noop": 6.472}
    goal = _goal(document, "sqlite_server_cpu_per_hand_vs_noop_at_8_clients")
    assert goal["measured"] == 4.0
    assert goal["detail"] == "user-space instructions (callgrind): 6.472x"


def test_no_instruction_ratio_is_named_where_none_was_counted() -> None:
    goal = _goal(
        _document(_point(500.0, 2.0), _point(500.0, 2.0)),
        "sqlite_server_cpu_per_hand_vs_noop_at_8_clients",
    )
    assert "detail" not in goal
