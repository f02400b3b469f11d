"""Small statistics shared by the measurements: percentiles and rates."""

import math
import statistics
from collections.abc import Sequence
from typing import Any


def percentile(sorted_values: Sequence[float], fraction: float) -> float:
    """The nearest-rank percentile of already sorted values (0 for none)."""
    if not sorted_values:
        return 0.0
    rank = max(1, math.ceil(fraction * len(sorted_values)))
    return sorted_values[min(rank, len(sorted_values)) - 1]


def latency_summary(seconds: Sequence[float]) -> dict[str, Any]:
    """p50, p99, mean and max in milliseconds, rounded to microseconds."""
    ordered = sorted(seconds)
    mean = sum(ordered) / len(ordered) if ordered else 0.0
    return {
        "p50": round(percentile(ordered, 0.50) * 1000, 3),
        "p99": round(percentile(ordered, 0.99) * 1000, 3),
        "mean": round(mean * 1000, 3),
        "max": round((ordered[-1] if ordered else 0.0) * 1000, 3),
    }


def rate(count: int, seconds: float) -> float:
    return round(count / seconds, 1) if seconds > 0 else 0.0


def median(values: Sequence[float | None], digits: int = 3) -> float | None:
    """The median of the values measured (None where a round measured nothing), or None
    when no round measured anything."""
    known = [value for value in values if value is not None]
    return round(statistics.median(known), digits) if known else None


def ratio(value: float | None, limit: float | None) -> float | None:
    """value / limit, or None when either side was not measured."""
    if value is None or limit is None or limit <= 0:
        return None
    return round(value / limit, 3)
