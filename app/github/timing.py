"""Clock and sleeper ports, so retry waits and budgets are tested without real sleeps."""

from __future__ import annotations

import time
from typing import Protocol


class Clock(Protocol):
    def now(self) -> float:
        """Seconds since the epoch."""
        ...


class Sleeper(Protocol):
    def sleep(self, seconds: float) -> None: ...


class SystemClock:
    def now(self) -> float:
        return time.time()


class SystemSleeper:
    def sleep(self, seconds: float) -> None:
        time.sleep(seconds)
