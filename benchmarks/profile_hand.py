"""Where a hand's time goes: `python -m benchmarks.profile_hand [--hands N] [--postgres]`.

Plays N hands through the whole Litestar app in-process (its test client: routing, auth,
idempotency, services, ledger, serialisation; no network) and counts the SQL statements per
hand by their first words; then plays N more straight through the service functions
(`open_hand`, `decide_hand`) under cProfile, whose top functions by own time go to stderr
(cProfile sees only the calling thread, hence the direct calls). A diagnostic for finding
hot spots, not a measurement of throughput.
"""

import argparse
import collections
import cProfile
import io
import logging
import pstats
import re
import sqlite3
import sys
import time
from collections.abc import Callable
from typing import Any

import psycopg
from litestar.testing import TestClient
from sqlalchemy import Engine, event

import migrations
from api.app import create_app
from api.db.database import Database
from api.settings import Settings
from benchmarks import http_load, scratch
from benchmarks.audit_bench import HandFactory
from benchmarks.plan import QUICK
from ledger.driver import watch_exchanges

_LITERAL = re.compile(r"'[^']*'|\b\d+\b")


def _statement_kind(statement: str) -> str:
    # SQLite traces statements with their values written in: one kind, whatever the values.
    words = _LITERAL.sub("?", " ".join(statement.split()))
    for marker in (" WHERE", " VALUES", " SET", " FROM"):
        if marker in words:
            head, _, rest = words.partition(marker)
            table = rest.split()[0] if marker == " FROM" and rest else ""
            return f"{head[:60]}{marker}{' ' + table if table else ''}"
    return words[:80]


def count_driver_statements(engine: Engine, count: Callable[[str], None]) -> None:
    """Count every statement the driver runs, SQLAlchemy's and the hot path's own (which go
    straight to the driver, past SQLAlchemy's execution events: SQLite's cursor, or on
    PostgreSQL the driver's own exchanges, whose COMMIT is counted too)."""

    def _each(texts: list[str]) -> None:
        for text in texts:
            count(text)

    if engine.dialect.name == "postgresql":
        watch_exchanges(engine, _each)

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        if isinstance(dbapi_connection, sqlite3.Connection):
            dbapi_connection.set_trace_callback(count)
            return

        class CountingCursor(psycopg.Cursor[Any]):
            def execute(self, query: Any, *args: Any, **kwargs: Any) -> Any:
                count(str(query))
                return super().execute(query, *args, **kwargs)

        dbapi_connection.cursor_factory = CountingCursor


def profile(database_url: str, hands: int) -> dict[str, Any]:
    migrations.upgrade(database_url)
    operator = http_load.operator_token(database_url)
    app = create_app(Settings(database_url=database_url))
    statements: list[str] = []
    counting = False
    with TestClient(app=app) as client:
        database: Database = app.state.database

        def _count(statement: str) -> None:
            if counting and not statement.startswith("--"):  # SQLite traces trigger bodies
                statements.append(statement)

        count_driver_statements(database.engine, _count)
        if database.sqlite_writer is not None:  # its kept connection is not the pool's
            database.sqlite_writer.close()
        database.engine.dispose()  # connections opened from now on count

        headers = {"Authorization": f"Bearer {operator}"}
        player = client.post(
            "/v1/players", json={}, headers={**headers, "Idempotency-Key": "p"}
        ).json()
        client.post(
            "/v1/cashier/deposits",
            json={"player_id": player["id"], "amount": 10**12, "currency": "USD"},
            headers={**headers, "Idempotency-Key": "d"},
        )
        tables = client.get("/v1/tables", headers=headers).json()["items"]
        table_id = next(t["id"] for t in tables if t["name"] == "standard")
        player_headers = {"Authorization": f"Bearer {player['token']}"}
        requests = 0

        def play(number: int) -> None:
            nonlocal requests
            hand = client.post(
                "/v1/hands",
                json={"table_id": table_id, "bet": 100},
                headers={**player_headers, "Idempotency-Key": f"h{number}"},
            ).json()
            requests += 1
            if hand["status"] == "awaiting_decision":
                client.post(
                    f"/v1/hands/{hand['id']}/decision",
                    json={"action": "war"},
                    headers={**player_headers, "Idempotency-Key": f"w{number}"},
                )
                requests += 1

        for number in range(20):  # warm caches (compiled statements, imports)
            play(-1 - number)
        requests = 0
        counting = True
        started = time.perf_counter()
        for number in range(hands):
            play(number)
        elapsed = time.perf_counter() - started
        counting = False
    factory = HandFactory(Database.connect(database_url), QUICK)
    factory.grow_to(20)
    profiler = cProfile.Profile()
    profiler.enable()
    factory.grow_to(20 + hands)
    profiler.disable()
    out = io.StringIO()
    pstats.Stats(profiler, stream=out).sort_stats("tottime").print_stats(25)
    print(out.getvalue(), file=sys.stderr)
    kinds = collections.Counter(_statement_kind(s) for s in statements)
    return {
        "hands": hands,
        "requests": requests,
        "ms_per_hand_in_process": round(elapsed / hands * 1000, 3),
        "statements_per_hand": round(len(statements) / hands, 2),
        "statements": {kind: round(n / hands, 2) for kind, n in kinds.most_common()},
    }


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.profile_hand", description=__doc__)
    parser.add_argument("--hands", type=int, default=300)
    parser.add_argument("--postgres-url", help="profile on a scratch PostgreSQL database")
    args = parser.parse_args()
    logging.getLogger("httpx").setLevel(
        logging.WARNING
    )  # a line per request would drown the profile
    if args.postgres_url:
        server, why = scratch.find_postgres(args.postgres_url)
        if server is None:
            parser.error(str(why))
        with server.scratch("profile") as url:
            result = profile(url, args.hands)
    else:
        with scratch.sqlite_scratch("profile") as url:
            result = profile(url, args.hands)
    for kind, count in result.pop("statements").items():
        print(f"{count:6.2f}  {kind}")
    print(result)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
