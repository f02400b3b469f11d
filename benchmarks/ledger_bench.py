"""Ledger postings per second: `ledger.posting.post` of a 2-transfer transaction, one
committed database transaction per posting, single client, in a loop."""

import itertools
import time
from typing import Any

from sqlalchemy.orm import sessionmaker

import migrations
from benchmarks.plan import Plan
from benchmarks.stats import latency_summary, rate
from ledger import chart
from ledger.database import make_engine
from ledger.model import TransactionRequest, Transfer
from ledger.posting import open_account, post


def postings(database_url: str, plan: Plan) -> dict[str, Any]:
    """Migrate the scratch database, fund a wallet, then post stake-and-settle pairs."""
    migrations.upgrade(database_url)
    engine = make_engine(database_url)
    sessions = sessionmaker(engine, expire_on_commit=False)
    wallet, held = chart.wallet("1", "USD"), chart.held("1", "USD")
    house, cashier = chart.house("USD"), chart.cashier("USD")
    keys = itertools.count()
    try:
        with sessions.begin() as session:
            for spec in (wallet, held, house, cashier):
                open_account(session, spec)
            post(
                session,
                TransactionRequest(
                    "deposit", "bench-fund", (Transfer(cashier.code, wallet.code, plan.deposit),)
                ),
            )
        transfers = (
            Transfer(debit=wallet.code, credit=held.code, amount=plan.bet),
            Transfer(debit=held.code, credit=house.code, amount=plan.bet),
        )
        latencies: list[float] = []
        started = time.perf_counter()
        deadline = started + plan.ledger_seconds
        while (now := time.perf_counter()) < deadline:
            with sessions.begin() as session:
                post(
                    session,
                    TransactionRequest(
                        kind="bench",
                        idempotency_key=f"bench:{next(keys)}",
                        transfers=transfers,
                        reference="bench",
                        metadata={"player_id": 1},
                    ),
                )
            latencies.append(time.perf_counter() - now)
        elapsed = time.perf_counter() - started
    finally:
        engine.dispose()
    return {
        "postings": len(latencies),
        "seconds": round(elapsed, 3),
        "postings_per_second": rate(len(latencies), elapsed),
        "latency_ms": latency_summary(latencies),
    }
