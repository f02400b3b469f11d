"""Ratios to the limits, and the side-by-side text table (`benchmarks.goals` says where each
goal stands)."""

from typing import Any

from benchmarks.stats import ratio

GOAL_CLIENTS = "8"
DATABASES = ("sqlite", "postgresql")
CPU_PREFIX = "cpu_ms_per_unit."
SERVER_CPU = CPU_PREFIX + "server"
SERVING_CPU = CPU_PREFIX + "serving"  # the server's, plus PostgreSQL's where it runs apart
LOAD_GENERATOR_CPU = CPU_PREFIX + "load_generator"


def _point_value(point: dict[str, Any] | None, key: str) -> float | None:
    """A figure of one load point, None when it was not measured."""
    if point is None:
        return None
    used = point.get("cpu_ms_per_unit", {})
    if key in ("p50_ms", "p99_ms"):
        value = point["latency_ms"][key[:-3]]
    elif key == SERVING_CPU:
        server, database = used.get("server"), used.get("database")
        value = None if server is None else server + (database or 0.0)
    elif key.startswith(CPU_PREFIX):
        value = used.get(key.removeprefix(CPU_PREFIX))
    else:
        value = point.get(key)
    return float(value) if value is not None else None


def curve_value(section: dict[str, Any] | None, clients: str, key: str) -> float | None:
    """A figure of one load point of a curve, None when that section was not measured."""
    if not section or not section.get("available"):
        return None
    return _point_value(section.get("points", {}).get(clients), key)


def _pairs(document: dict[str, Any]) -> dict[str, tuple[Any, str, Any, str]]:
    """Each ratio: (our section, its figure, the section under it, its figure)."""
    limits = document["limits"]
    pairs = {
        "postgresql_hands_vs_pgbench_tps": (
            document["http"].get("postgresql"),
            "hands_per_second",
            limits["pgbench"],
            "tps",
        ),
        "sqlite_hands_vs_raw_sqlite_tps": (
            document["http"].get("sqlite"),
            "hands_per_second",
            limits["sqlite_raw"],
            "tps",
        ),
    }
    for db in DATABASES:
        hands, deposits = document["http"].get(db), document.get("deposits", {}).get(db)
        noop = limits["noop_http"].get(db)
        pairs[f"{db}_hands_vs_noop_requests"] = (
            hands,
            "hands_per_second",
            noop,
            "requests_per_second",
        )
        pairs[f"{db}_server_cpu_per_hand_vs_noop_request"] = (hands, SERVER_CPU, noop, SERVER_CPU)
        pairs[f"{db}_deposits_vs_noop_requests"] = (
            deposits,
            "deposits_per_second",
            noop,
            "requests_per_second",
        )
        pairs[f"{db}_server_cpu_per_deposit_vs_noop_request"] = (
            deposits,
            SERVER_CPU,
            noop,
            SERVER_CPU,
        )
    return pairs


def _history_ratios(document: dict[str, Any]) -> dict[str, dict[str, float | None]]:
    """A hand's CPU at the history point over its CPU at the same client count on the fresh
    database: the serving side's (server and PostgreSQL), the server's alone, and the load
    generator's. The load generator sends and reads the same requests at any history, so
    its ratio is how much the host itself moved between the two points, minutes apart: on
    this shared host the serving side's ratio has followed it (docs/performance.md)."""
    clients = str(document["settings"]["history_clients"])
    result: dict[str, dict[str, float | None]] = {}
    for db in DATABASES:
        history = document.get("history", {}).get(db) or {}
        point = history.get("point") if history.get("available") else None
        fresh = document["http"].get(db)
        for name, key in (
            ("cpu", SERVING_CPU),
            ("server_cpu", SERVER_CPU),
            ("load_generator_cpu", LOAD_GENERATOR_CPU),
        ):
            result[f"{db}_{name}_per_hand_history_vs_fresh"] = {
                clients: ratio(_point_value(point, key), curve_value(fresh, clients, key))
            }
    return result


def ratios(document: dict[str, Any], clients: list[str]) -> dict[str, dict[str, float | None]]:
    """Each of our HTTP figures divided by the limit under it, per client count."""
    limits = document["limits"]
    result: dict[str, dict[str, float | None]] = {}
    for name, (ours, our_key, limit, limit_key) in _pairs(document).items():
        result[name] = {
            c: ratio(curve_value(ours, c, our_key), curve_value(limit, c, limit_key))
            for c in clients
        }
    result.update(_history_ratios(document))
    ledger = document["ledger"]
    result["ledger_postings_vs_limit_tps_1_client"] = {
        "sqlite": ratio(
            (ledger.get("sqlite") or {}).get("postings_per_second"),
            curve_value(limits["sqlite_raw"], "1", "tps"),
        ),
        "postgresql": ratio(
            (ledger.get("postgresql") or {}).get("postings_per_second"),
            curve_value(limits["pgbench"], "1", "tps"),
        ),
    }
    return result


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
    """Server CPU per hand and per deposit against a do-nothing request's, at the goals'
    client count, and how each server was served."""
    http, noop, r = document["http"], document["limits"]["noop_http"], document["ratios"]
    lines = []
    for db, name in (("sqlite", "SQLite"), ("postgresql", "PostgreSQL")):
        hand = curve_value(http.get(db), GOAL_CLIENTS, SERVER_CPU)
        if hand is None:
            continue
        database = curve_value(http.get(db), GOAL_CLIENTS, CPU_PREFIX + "database")
        in_database = f" (+ {_fmt(database, 2)} in PostgreSQL)" if database is not None else ""
        deposit = curve_value(document["deposits"].get(db), GOAL_CLIENTS, SERVER_CPU)
        lines.append(
            f"server CPU at {GOAL_CLIENTS} clients, {name}: "
            f"{_fmt(curve_value(noop.get(db), GOAL_CLIENTS, SERVER_CPU), 2)} ms per do-nothing "
            f"request; {_fmt(hand, 2)} ms per hand{in_database} "
            f"({_fmt(r[f'{db}_server_cpu_per_hand_vs_noop_request'].get(GOAL_CLIENTS), 2)}x), "
            f"{_fmt(deposit, 2)} ms per deposit "
            f"({_fmt(r[f'{db}_server_cpu_per_deposit_vs_noop_request'].get(GOAL_CLIENTS), 2)}x)"
        )
        served = http[db].get("served_with") or {}
        served_noop = noop[db].get("served_with") or {}
        lines.append(
            f"  served with loop={served.get('loop')} http={served.get('http')} "
            f"(do-nothing: loop={served_noop.get('loop')} http={served_noop.get('http')})"
        )
    return lines


def _deposit_lines(document: dict[str, Any], clients: list[str]) -> list[str]:
    """Deposits per second, their latency and their rate against do-nothing requests."""
    lines = [
        f"{'clients':>8} | {'SQLite dep/s':>14} {'p50 ms':>7} {'p99 ms':>7} {'ratio':>6} | "
        f"{'PG dep/s':>10} {'p50 ms':>7} {'p99 ms':>7} {'ratio':>6}"
    ]
    deposits, r = document["deposits"], document["ratios"]
    for c in clients:
        cells = [f"{c:>8} |"]
        for db, width in (("sqlite", 14), ("postgresql", 10)):
            section = deposits.get(db)
            cells.append(
                f"{_fmt(curve_value(section, c, 'deposits_per_second')):>{width}} "
                f"{_fmt(curve_value(section, c, 'p50_ms')):>7} "
                f"{_fmt(curve_value(section, c, 'p99_ms')):>7} "
                f"{_fmt(r[f'{db}_deposits_vs_noop_requests'].get(c), 3):>6}"
                + (" |" if db == "sqlite" else "")
            )
        lines.append(" ".join(cells))
    return lines


def _history_lines(document: dict[str, Any]) -> list[str]:
    """The history point: a hand's CPU after history against on the fresh database."""
    clients = str(document["settings"]["history_clients"])
    lines = []
    for db in DATABASES:
        history = document["history"].get(db) or {}
        if not history.get("available"):
            continue
        point = history["point"]
        ratios = document["ratios"]
        serving = ratios[f"{db}_cpu_per_hand_history_vs_fresh"].get(clients)
        load_generator = ratios[f"{db}_load_generator_cpu_per_hand_history_vs_fresh"].get(clients)
        lines.append(
            f"history, {db}: {history['hands']:,} hands ({history['filled_hands']:,} filled "
            f"in-process at {_fmt(history['fill_hands_per_second'])} hands/s), {clients} "
            f"clients: {_fmt(point['hands_per_second'])} hands/s, p99 "
            f"{_fmt(point['latency_ms']['p99'])} ms, CPU per hand "
            f"{_fmt(_point_value(point, SERVING_CPU), 2)} ms, "
            f"{_fmt(serving, 3)}x the fresh database's (the load generator's own: "
            f"{_fmt(load_generator, 3)}x)"
        )
    if lines and document["mode"] != "full":
        lines.append(
            f"  ({document['mode']} run: {document['settings']['history_hands']:,} hands of "
            "history; full runs and the goal use 100,000)"
        )
    return lines


def _audit_lines(audit: dict[str, Any]) -> list[str]:
    """The audit at each size, one process and several, and its instructions where counted."""
    lines = [
        f"audit ({audit.get('function')}, {audit.get('database')}; generated at "
        f"{_fmt(audit.get('generation_hands_per_second'))} hands/s in-process):"
    ]
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
    return lines


def _served_instructions_lines(document: dict[str, Any]) -> list[str]:
    """A served SQLite hand's user-space instructions and a do-nothing request's, where a
    full run counted them."""
    counted = document.get("served_instructions")
    if counted is None:
        return []
    servers = counted["servers"]
    return [
        f"served instructions (callgrind, SQLite, {counted['clients']} clients): "
        f"{servers['hot_path']['instructions_per_unit']:,} a hand, "
        f"{servers['noop']['instructions_per_unit']:,} a do-nothing request "
        f"({_fmt(counted['hot_path_vs_noop'], 2)}x)"
    ]


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
            f"{_fmt(curve_value(http.get('sqlite'), c, 'hands_per_second')):>14} "
            f"{_fmt(curve_value(http.get('sqlite'), c, 'p50_ms')):>7} "
            f"{_fmt(curve_value(http.get('sqlite'), c, 'p99_ms')):>7} "
            f"{_fmt(curve_value(noop_sqlite, c, 'requests_per_second')):>10} "
            f"{_fmt(r['sqlite_hands_vs_noop_requests'].get(c), 3):>6} | "
            f"{_fmt(curve_value(http.get('postgresql'), c, 'hands_per_second')):>10} "
            f"{_fmt(curve_value(http.get('postgresql'), c, 'p50_ms')):>7} "
            f"{_fmt(curve_value(http.get('postgresql'), c, 'p99_ms')):>7} "
            f"{_fmt(curve_value(limits['pgbench'], c, 'tps')):>8} "
            f"{_fmt(r['postgresql_hands_vs_pgbench_tps'].get(c), 3):>6}"
        )
    lines.append("")
    lines.extend(_deposit_lines(document, clients))
    lines.append("")
    lines.extend(_cpu_lines(document))
    lines.extend(_history_lines(document))
    lines.append(
        "raw SQLite TPC-B-shaped tps: "
        + ", ".join(
            f"{c} clients {_fmt(curve_value(limits['sqlite_raw'], c, 'tps'))}" for c in clients
        )
    )
    for db in ("sqlite", "postgresql"):
        ledger = document["ledger"].get(db) or {}
        lines.append(
            f"ledger postings/s ({db}, 1 client, commit each): "
            f"{_fmt(ledger.get('postings_per_second'))}"
        )
    lines.extend(_audit_lines(document["audit"]))
    lines.extend(_served_instructions_lines(document))
    lines.append(f"simulation: {_fmt(document['simulation'].get('hands_per_second'))} hands/s")
    lines.append("")
    lines.append("goals:")
    for goal in document["goals"]:
        detail = f" ({goal['detail']})" if goal.get("detail") else ""
        lines.append(
            f"  {goal['goal']:<52} target {goal['target']:<14} "
            f"measured {_fmt(goal['measured'], 3):>10}  met {_fmt(goal['met'])}{detail}"
        )
    for note in document["unavailable"]:
        lines.append(f"unavailable: {note}")
    return "\n".join(lines)
