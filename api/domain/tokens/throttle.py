"""Failed authentications counted per client address: past a limit a minute, the address
gets 429 until its failures age out, and each such burst is one significant event.

Kept in each server process's memory: it is a brake on guessing, not an accounting, so a
restart forgets it and N workers admit N times the limit (docs/security.md).
"""

import time
from collections import deque
from dataclasses import dataclass, field
from typing import Final

WINDOW_SECONDS: Final = 60.0
MAX_ADDRESSES: Final = 10_000


@dataclass(slots=True)
class _Failures:
    times: deque[float] = field(default_factory=deque)
    throttled: bool = False


class FailureThrottle:
    def __init__(self, limit: int, window_seconds: float = WINDOW_SECONDS) -> None:
        self.limit = limit
        self.window = window_seconds
        self._by_address: dict[str, _Failures] = {}

    def retry_after(self, address: str) -> int | None:
        """Seconds until the address may try again, or None when it may now."""
        failures = self._by_address.get(address)
        if failures is None:
            return None
        self._forget_old(failures, time.monotonic())
        if len(failures.times) < self.limit:
            failures.throttled = False
            return None
        return max(1, int(failures.times[0] + self.window - time.monotonic()) + 1)

    def failed(self, address: str) -> bool:
        """Count a failure; True when it starts a burst (the address is throttled from now)."""
        if len(self._by_address) >= MAX_ADDRESSES and address not in self._by_address:
            self._by_address.clear()
        failures = self._by_address.setdefault(address, _Failures())
        now = time.monotonic()
        self._forget_old(failures, now)
        failures.times.append(now)
        if len(failures.times) >= self.limit and not failures.throttled:
            failures.throttled = True
            return True
        return False

    def _forget_old(self, failures: _Failures, now: float) -> None:
        while failures.times and failures.times[0] <= now - self.window:
            failures.times.popleft()
