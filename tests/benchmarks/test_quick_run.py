"""The benchmark runs end to end on tiny sizes and reports every figure; no timing asserted.

PostgreSQL is measured when CASINO_WAR_TEST_POSTGRES_URL names a server (as in CI);
otherwise its figures must be reported unavailable (null), not crash the run.
"""

import json
import math
import os
from datetime import UTC, datetime, timedelta
from numbers import Real
from typing import Any

import pytest

from benchmarks.plan import TINY
from benchmarks.report import text
from benchmarks.runner import run

TOP_LEVEL = {
    "mode",
    "started_at",
    "machine",
    "settings",
    "http",
    "deposits",
    "history",
    "limits",
    "ledger",
    "audit",
    "served_instructions",
    "simulation",
    "unavailable",
    "ratios",
    "goals",
    "seconds",
}
RATIOS = {
    "postgresql_hands_vs_pgbench_tps",
    "sqlite_hands_vs_raw_sqlite_tps",
    *(
        f"{db}_{name}"
        for db in ("sqlite", "postgresql")
        for name in (
            "hands_vs_noop_requests",
            "server_cpu_per_hand_vs_noop_request",
            "deposits_vs_noop_requests",
            "server_cpu_per_deposit_vs_noop_request",
            "cpu_per_hand_history_vs_fresh",
            "server_cpu_per_hand_history_vs_fresh",
            "load_generator_cpu_per_hand_history_vs_fresh",
        )
    ),
    "ledger_postings_vs_limit_tps_1_client",
}
ISSUE_16_GOALS = {
    "sqlite_server_cpu_per_hand_vs_noop_at_8_clients",
    "sqlite_hands_vs_noop_at_8_clients",
    "sqlite_p99_ms_at_8_clients",
    "postgresql_server_cpu_per_hand_vs_noop_at_8_clients",
    "postgresql_hands_vs_noop_at_8_clients",
    "postgresql_p99_ms_at_8_clients",
    "sqlite_cpu_per_hand_history_vs_fresh",
    "postgresql_cpu_per_hand_history_vs_fresh",
    "audit_hands_per_second",
}
POINT = {"clients", "seconds", "requests_per_second", "errors", "latency_ms"}


def _is_number(value: Any) -> bool:
    return isinstance(value, Real) and not isinstance(value, bool)


@pytest.fixture(scope="module")
def document() -> dict[str, Any]:
    postgres_url = os.environ.get("CASINO_WAR_TEST_POSTGRES_URL")
    plan = TINY if postgres_url else TINY.with_databases(("sqlite",))
    result = run(plan, postgres_url)
    json.dumps(result)  # one JSON document: everything in it serialises
    return result


@pytest.mark.slow
def test_the_document_has_every_section_and_names_its_mode(document: dict[str, Any]) -> None:
    assert document.keys() >= TOP_LEVEL
    assert document["mode"] == "tiny"
    assert set(document["ratios"]) == RATIOS
    assert {"pgbench", "sqlite_raw", "noop_http"} <= document["limits"].keys()


@pytest.mark.slow
def test_the_run_is_dated_from_its_start(document: dict[str, Any]) -> None:
    started_at = datetime.fromisoformat(document["started_at"])
    assert datetime.now(UTC) - started_at >= timedelta(seconds=document["seconds"] - 1)


@pytest.mark.slow
def test_sqlite_hands_are_measured_at_every_client_count(document: dict[str, Any]) -> None:
    section = document["http"]["sqlite"]
    assert section["available"]
    for clients in ("1", "2"):
        point = section["points"][clients]
        assert point.keys() >= POINT
        assert point["errors"] == 0, point["first_error"]
        assert point["hands_per_second"] > 0
        assert {"p50", "p99"} <= point["latency_ms"].keys()
        assert _is_number(document["limits"]["sqlite_raw"]["points"][clients]["tps"])


@pytest.mark.slow
def test_each_load_point_reports_the_cpu_per_unit_of_the_processes_under_load(
    document: dict[str, Any],
) -> None:
    sections = [document["http"]["sqlite"], document["limits"]["noop_http"]["sqlite"]]
    postgres = document["http"].get("postgresql", {})
    if postgres.get("available"):
        sections.append(postgres)
    for section in sections:
        for point in section["points"].values():
            used = point["cpu_ms_per_unit"]
            assert _is_number(used["server"]) and used["server"] > 0
            assert _is_number(used["load_generator"])
            assert ("database" in used) == (section is postgres)
    if postgres.get("available"):
        assert _is_number(postgres["points"]["1"]["cpu_ms_per_unit"]["database"])


@pytest.mark.slow
def test_sqlite_deposits_are_measured_at_every_client_count_with_their_cpu(
    document: dict[str, Any],
) -> None:
    section = document["deposits"]["sqlite"]
    assert section["available"]
    for clients in ("1", "2"):
        point = section["points"][clients]
        assert point.keys() >= POINT
        assert point["errors"] == 0, point["first_error"]
        assert point["deposits_per_second"] > 0
        assert _is_number(point["cpu_ms_per_unit"]["server"])


@pytest.mark.slow
def test_the_history_point_is_measured_after_the_database_is_filled_to_the_plans_size(
    document: dict[str, Any],
) -> None:
    history = document["history"]["sqlite"]
    assert history["available"]
    assert history["clients"] == document["settings"]["history_clients"] == 2
    assert history["hands"] >= document["settings"]["history_hands"] == 200
    assert history["hands"] == history["hands_before_fill"] + history["filled_hands"]
    assert _is_number(history["fill_hands_per_second"])
    point = history["point"]
    assert point["clients"] == 2 and point["errors"] == 0, point["first_error"]
    assert point["hands_per_second"] > 0
    assert _is_number(point["cpu_ms_per_unit"]["server"])
    assert _is_number(document["ratios"]["sqlite_cpu_per_hand_history_vs_fresh"]["2"])


@pytest.mark.slow
def test_every_server_reports_the_loop_and_http_parser_it_ran_on(
    document: dict[str, Any],
) -> None:
    served = [
        section["served_with"]
        for name in ("http", "deposits", "history")
        for section in document[name].values()  # one per database the run could reach
        if section["available"]
    ]
    served += [
        section["served_with"]
        for section in document["limits"]["noop_http"].values()
        if section["available"]
    ]
    assert served and all(s == {"loop": "uvloop", "http": "httptools"} for s in served)


@pytest.mark.slow
def test_issue_16s_goals_are_reported_with_a_target_and_where_they_stand(
    document: dict[str, Any],
) -> None:
    goals = {goal["goal"]: goal for goal in document["goals"]}
    assert goals.keys() >= ISSUE_16_GOALS
    for goal in goals.values():
        assert goal["met"] is None if goal["measured"] is None else isinstance(goal["met"], bool)
    history = goals["sqlite_cpu_per_hand_history_vs_fresh"]
    assert "(tiny run: the goal is at 100,000)" in history["detail"]


@pytest.mark.slow
def test_ratios_are_numbers_where_both_sides_were_measured(document: dict[str, Any]) -> None:
    postgres = document["http"].get("postgresql", {}).get("available", False)
    pgbench = document["limits"]["pgbench"]["available"]
    for name, values in document["ratios"].items():
        for key, value in values.items():
            on_postgres = "postgresql" in name or key == "postgresql"
            on_pgbench = "pgbench" in name or key == "postgresql"
            if (not on_postgres or postgres) and (not on_pgbench or pgbench):
                assert _is_number(value), (name, values)
            else:
                assert value is None, (name, values)
    assert _is_number(document["ratios"]["sqlite_hands_vs_noop_requests"]["1"])


@pytest.mark.slow
def test_audit_ledger_and_simulation_figures_are_reported(document: dict[str, Any]) -> None:
    audit = document["audit"]
    assert set(audit["sizes"]) == {"50", "100"}
    for point in audit["sizes"].values():
        assert point["mismatches"] == 0
        assert _is_number(point["hands_per_second"]) and _is_number(point["peak_traced_mib"])
    assert _is_number(document["ledger"]["sqlite"]["postings_per_second"])
    assert _is_number(document["simulation"]["hands_per_second"])
    assert {goal["goal"] for goal in document["goals"]} >= {"audit_hands_per_second"}


@pytest.mark.slow
def test_the_parallel_audit_is_measured_at_every_size_and_the_goal_names_the_best(
    document: dict[str, Any],
) -> None:
    audit = document["audit"]
    assert audit["jobs"] == os.cpu_count()
    for point in audit["sizes"].values():
        assert point["mismatches_parallel"] == 0
        assert _is_number(point["hands_per_second_parallel"])
        assert _is_number(point["seconds_parallel_cold"])
        # The tiny plan's chunks are small enough that several make up each size.
        assert point["jobs"] == min(audit["jobs"], math.ceil(point["hands"] / audit["chunk"]))
    (goal,) = [g for g in document["goals"] if g["goal"] == "audit_hands_per_second"]
    largest = audit["sizes"]["100"]
    assert goal["measured"] == max(
        largest["hands_per_second"], largest["hands_per_second_parallel"]
    )
    assert goal["detail"].endswith("at 100 hands")


@pytest.mark.slow
def test_a_short_run_counts_no_instructions(document: dict[str, Any]) -> None:
    assert document["settings"]["audit_instruction_hands"] is None
    assert document["audit"]["instructions"] is None
    assert document["settings"]["served_instruction_hands"] is None
    assert document["served_instructions"] is None


@pytest.mark.slow
def test_the_text_report_renders(document: dict[str, Any]) -> None:
    rendered = text(document)
    assert "goals:" in rendered and "clients" in rendered
    assert "SQLite dep/s" in rendered
    assert "history, sqlite: " in rendered
    assert "(tiny run: 200 hands of history; full runs and the goal use 100,000)" in rendered


@pytest.mark.slow
def test_the_text_report_shows_the_instruction_count_of_a_full_run(
    document: dict[str, Any],
) -> None:
    counted = {**document["audit"], "instructions": {"instructions_per_hand": 318_622}}
    rendered = text({**document, "audit": counted})
    assert "instructions per audited hand (callgrind): 318,622" in rendered


@pytest.mark.slow
def test_the_text_report_shows_the_served_instructions_of_a_full_run(
    document: dict[str, Any],
) -> None:
    counted = {
        "clients": 8,
        "servers": {
            "hot_path": {"instructions_per_unit": 2_528_901},
            "noop": {"instructions_per_unit": 390_724},
        },
        "hot_path_vs_noop": 6.472,
    }
    rendered = text({**document, "served_instructions": counted})
    assert (
        "served instructions (callgrind, SQLite, 8 clients): 2,528,901 a hand, "
        "390,724 a do-nothing request (6.47x)"
    ) in rendered
