"""GitHub's secondary limit on content-creating requests, kept per installation:
80 a minute and 500 an hour
(https://docs.github.com/en/rest/using-the-rest-api/rate-limits-for-the-rest-api#about-secondary-rate-limits).
A request over budget waits for the oldest one to leave its window."""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable

from app.github.timing import Clock, Sleeper

WINDOWS = ((60.0, 80), (3600.0, 500))


class ContentBudget:
    def __init__(
        self, clock: Clock, sleeper: Sleeper, windows: tuple[tuple[float, int], ...] = WINDOWS
    ) -> None:
        self._clock = clock
        self._sleeper = sleeper
        self._windows = windows
        self._sent: dict[int, deque[float]] = {}
        self._lock = threading.Lock()

    def acquire(self, installation_id: int, sleep: Callable[[float], None] | None = None) -> float:
        """Take one slot, waiting if needed (with `sleep` when given, which may
        refuse a wait by raising); returns the seconds waited."""
        waited = 0.0
        while True:
            with self._lock:
                now = self._clock.now()
                sent = self._sent.setdefault(installation_id, deque())
                longest = max(w for w, _ in self._windows)
                while sent and sent[0] <= now - longest:
                    sent.popleft()
                wait = 0.0
                for window, limit in self._windows:
                    inside = [t for t in sent if t > now - window]
                    if len(inside) >= limit:
                        wait = max(wait, inside[-limit] + window - now)
                if wait <= 0:
                    sent.append(now)
                    return waited
            (sleep or self._sleeper.sleep)(wait)
            waited += wait
