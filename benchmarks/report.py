"""Ratios to the limits, where each goal stands, and the side-by-side text table."""

from typing import Any

from benchmarks.stats import ratio

GOAL_CLIENTS = "8"
CPU_PREFIX = "cpu_ms_per_unit."
SERVER_CPU = CPU_PREFIX + "server"


def _curve_value(section: dict[str, Any] | None, clients: str, key: str) -> float | None:
    """A figure of one load point, None when that section was not measured."""
    if not section or not section.get("available"):
        return None
    point = section.get("points", {}).get(clients)
    if point is None:
        return None
    if key in ("p50_ms", "p99_ms"):
        value = point["latency_ms"][key[:-3]]
    elif key.startswith(CPU_PREFIX):
        value = point.get("cpu_ms_per_unit", {}).get(key.removeprefix(CPU_PREFIX))
    else:
        value = point.get(key)
    return float(value) if value is not None else None


def ratios(document: dict[str, Any], clients: list[str]) -> dict[str, dict[str, float | None]]:
    """Each of our HTTP figures divided by the limit under it, per client count."""
    http, limits = document["http"], document["limits"]
    pairs = {
        "postgresql_hands_vs_pgbench_tps": (
            http.get("postgresql"),
            "hands_per_second",
            limits["pgbench"],
            "tps",
        ),
        "postgresql_hands_vs_noop_requests": (
            http.get("postgresql"),
            "hands_per_second",
            limits["noop_http"].get("postgresql"),
            "requests_per_second",
        ),
        "sqlite_hands_vs_noop_requests": (
            http.get("sqlite"),
            "hands_per_second",
            limits["noop_http"].get("sqlite"),
            "requests_per_second",
        ),
        "sqlite_hands_vs_raw_sqlite_tps": (
            http.get("sqlite"),
            "hands_per_second",
            limits["sqlite_raw"],
            "tps",
        ),
        # Inverted on purpose: a do-nothing request's server CPU over a hand's is the hands
        # per do-nothing request the server could answer were its CPU the only limit.
        "sqlite_hands_vs_noop_server_cpu": (
            limits["noop_http"].get("sqlite"),
            SERVER_CPU,
            http.get("sqlite"),
            SERVER_CPU,
        ),
        "postgresql_hands_vs_noop_server_cpu": (
            limits["noop_http"].get("postgresql"),
            SERVER_CPU,
            http.get("postgresql"),
            SERVER_CPU,
        ),
    }
    result: dict[str, dict[str, float | None]] = {}
    for name, (ours, our_key, limit, limit_key) in pairs.items():
        result[name] = {
            c: ratio(_curve_value(ours, c, our_key), _curve_value(limit, c, limit_key))
            for c in clients
        }
    ledger = document["ledger"]
    result["ledger_postings_vs_limit_tps_1_client"] = {
        "sqlite": ratio(
            (ledger.get("sqlite") or {}).get("postings_per_second"),
            _curve_value(limits["sqlite_raw"], "1", "tps"),
        ),
        "postgresql": ratio(
            (ledger.get("postgresql") or {}).get("postings_per_second"),
            _curve_value(limits["pgbench"], "1", "tps"),
        ),
    }
    return result


def _goal(name: str, target: str, measured: float | None, met: bool | None) -> dict[str, Any]:
    return {"goal": name, "target": target, "measured": measured, "met": met}


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


def goals(document: dict[str, Any]) -> list[dict[str, Any]]:
    """Where each design goal stands (informative: nothing fails on a missed goal)."""
    r = document["ratios"]
    pg_ratio = r["postgresql_hands_vs_pgbench_tps"].get(GOAL_CLIENTS)
    sqlite_ratio = r["sqlite_hands_vs_noop_requests"].get(GOAL_CLIENTS)
    p99s = {
        db: _curve_value(document["http"].get(db), GOAL_CLIENTS, "p99_ms")
        for db in ("sqlite", "postgresql")
    }
    audit = document["audit"]
    audit_rate, audit_how = _best_audit_rate(audit)
    growth = audit.get("memory_growth")
    items = [
        _goal(
            "postgresql_hands_vs_pgbench_at_8_clients",
            ">= 0.5",
            pg_ratio,
            None if pg_ratio is None else pg_ratio >= 0.5,
        ),
        _goal(
            "sqlite_hands_vs_noop_at_8_clients",
            ">= 0.5",
            sqlite_ratio,
            None if sqlite_ratio is None else sqlite_ratio >= 0.5,
        ),
    ]
    for db, p99 in p99s.items():
        items.append(
            _goal(f"{db}_p99_ms_at_8_clients", "< 50", p99, None if p99 is None else p99 < 50)
        )
    audit_goal = _goal(
        "audit_hands_per_second",
        ">= 50000",
        audit_rate,
        None if audit_rate is None else audit_rate >= 50_000,
    )
    audit_goal["detail"] = audit_how
    items.append(audit_goal)
    items.append(
        _goal(
            "audit_memory_growth_largest_vs_smallest",
            "<= 1.5 (flat)",
            growth,
            None if growth is None else growth <= 1.5,
        )
    )
    return items


# Text ------------------------------------------------------------------------------------


def _fmt(value: Any, digits: int = 1) -> str:
    if value is None:
        return "n/a"
    if isinstance(value, bool):
        return "yes" if value else "NO"
    if isinstance(value, float):
        return f"{value:,.{digits}f}"
    return str(value)


def _cpu_lines(document: dict[str, Any]) -> list[str]:
    """Server CPU per hand and per do-nothing request at the goals' client count."""
    http, noop, r = document["http"], document["limits"]["noop_http"], document["ratios"]
    lines = []
    for db, name in (("sqlite", "SQLite"), ("postgresql", "PostgreSQL")):
        hand = _curve_value(http.get(db), GOAL_CLIENTS, SERVER_CPU)
        if hand is None:
            continue
        database = _curve_value(http.get(db), GOAL_CLIENTS, CPU_PREFIX + "database")
        in_database = f" (+ {_fmt(database, 2)} in PostgreSQL)" if database is not None else ""
        lines.append(
            f"server CPU at {GOAL_CLIENTS} clients, {name}: {_fmt(hand, 2)} ms per hand"
            f"{in_database}, {_fmt(_curve_value(noop.get(db), GOAL_CLIENTS, SERVER_CPU), 2)} ms "
            f"per do-nothing request, ratio "
            f"{_fmt(r[f'{db}_hands_vs_noop_server_cpu'].get(GOAL_CLIENTS), 3)}"
        )
    return lines


def text(document: dict[str, Any]) -> str:
    """The side-by-side table a person reads after `python -m benchmarks`."""
    clients = [str(c) for c in document["settings"]["clients"]]
    http, limits, r = document["http"], document["limits"], document["ratios"]
    lines = [
        f"casino-war benchmarks ({document['mode']}), {document['machine']['cpus']} CPUs, "
        f"PostgreSQL {document['machine']['postgresql'] or 'n/a'}, "
        f"SQLite {document['machine']['sqlite']}",
        "",
        f"{'clients':>8} | {'SQLite hands/s':>14} {'p50 ms':>7} {'p99 ms':>7} "
        f"{'noop req/s':>10} {'ratio':>6} | {'PG hands/s':>10} {'p50 ms':>7} {'p99 ms':>7} "
        f"{'pgbench':>8} {'ratio':>6}",
    ]
    noop_sqlite = limits["noop_http"].get("sqlite")
    for c in clients:
        lines.append(
            f"{c:>8} | "
            f"{_fmt(_curve_value(http.get('sqlite'), c, 'hands_per_second')):>14} "
            f"{_fmt(_curve_value(http.get('sqlite'), c, 'p50_ms')):>7} "
            f"{_fmt(_curve_value(http.get('sqlite'), c, 'p99_ms')):>7} "
            f"{_fmt(_curve_value(noop_sqlite, c, 'requests_per_second')):>10} "
            f"{_fmt(r['sqlite_hands_vs_noop_requests'].get(c), 3):>6} | "
            f"{_fmt(_curve_value(http.get('postgresql'), c, 'hands_per_second')):>10} "
            f"{_fmt(_curve_value(http.get('postgresql'), c, 'p50_ms')):>7} "
            f"{_fmt(_curve_value(http.get('postgresql'), c, 'p99_ms')):>7} "
            f"{_fmt(_curve_value(limits['pgbench'], c, 'tps')):>8} "
            f"{_fmt(r['postgresql_hands_vs_pgbench_tps'].get(c), 3):>6}"
        )
    lines.append("")
    lines.extend(_cpu_lines(document))
    lines.append(
        "raw SQLite TPC-B-shaped tps: "
        + ", ".join(
            f"{c} clients {_fmt(_curve_value(limits['sqlite_raw'], c, 'tps'))}" for c in clients
        )
    )
    for db in ("sqlite", "postgresql"):
        ledger = document["ledger"].get(db) or {}
        lines.append(
            f"ledger postings/s ({db}, 1 client, commit each): "
            f"{_fmt(ledger.get('postings_per_second'))}"
        )
    audit = document["audit"]
    lines.append(
        f"audit ({audit.get('function')}, {audit.get('database')}; generated at "
        f"{_fmt(audit.get('generation_hands_per_second'))} hands/s in-process):"
    )
    for size, point in (audit.get("sizes") or {}).items():
        lines.append(
            f"  {size:>7} hands: {_fmt(point['hands_per_second'])} hands/s, "
            f"{_fmt(point['hands_per_second_parallel'])} with {point['jobs']} processes, "
            f"peak traced {point['peak_traced_mib']} MiB, RSS {point['rss_mib']} MiB, "
            f"mismatches {point['mismatches']}"
        )
    counted = audit.get("instructions")
    if counted is not None:
        lines.append(
            f"  instructions per audited hand (callgrind): {counted['instructions_per_hand']:,}"
        )
    lines.append(f"simulation: {_fmt(document['simulation'].get('hands_per_second'))} hands/s")
    lines.append("")
    lines.append("goals:")
    for goal in document["goals"]:
        detail = f" ({goal['detail']})" if goal.get("detail") else ""
        lines.append(
            f"  {goal['goal']:<42} target {goal['target']:<14} "
            f"measured {_fmt(goal['measured'], 3):>10}  met {_fmt(goal['met'])}{detail}"
        )
    for note in document["unavailable"]:
        lines.append(f"unavailable: {note}")
    return "\n".join(lines)
