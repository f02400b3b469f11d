"""Simulation throughput: `casino.simulate.simulate` (the real engine and fairness stream)."""

import time
from typing import Any

from benchmarks.plan import Plan
from benchmarks.stats import rate
from casino.hand import Action
from casino.simulate import simulate


def simulation(plan: Plan) -> dict[str, Any]:
    """Hands per second of the engine alone, going to war on every tie."""
    started = time.perf_counter()
    result = simulate(plan.simulation_hands, strategy=Action.WAR)
    elapsed = time.perf_counter() - started
    return {
        "hands": result.hands,
        "seconds": round(elapsed, 3),
        "hands_per_second": rate(result.hands, elapsed),
    }
