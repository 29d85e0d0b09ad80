"""Requests counted per installation and operation: here for the bench and
tests, and per installation in `odw_github_requests_total` for /metrics."""

from __future__ import annotations

import threading
from collections import Counter

from app.metrics import GITHUB_REQUESTS


class RequestCounter:
    def __init__(self) -> None:
        self._counts: Counter[tuple[int, str]] = Counter()
        self._lock = threading.Lock()

    def add(self, installation_id: int, operation: str) -> None:
        with self._lock:
            self._counts[(installation_id, operation)] += 1
        GITHUB_REQUESTS.labels(installation=str(installation_id)).inc()

    def snapshot(self) -> dict[tuple[int, str], int]:
        with self._lock:
            return dict(self._counts)

    def by_operation(self) -> dict[str, int]:
        totals: Counter[str] = Counter()
        for (_, operation), n in self.snapshot().items():
            totals[operation] += n
        return dict(totals)

    def total(self, installation_id: int | None = None) -> int:
        return sum(n for (inst, _), n in self.snapshot().items() if installation_id in (None, inst))
