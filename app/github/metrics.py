"""Requests counted per installation and operation, for /metrics and the bench."""

from __future__ import annotations

import threading
from collections import Counter


class RequestCounter:
    def __init__(self) -> None:
        self._counts: Counter[tuple[int, str]] = Counter()
        self._lock = threading.Lock()

    def add(self, installation_id: int, operation: str) -> None:
        with self._lock:
            self._counts[(installation_id, operation)] += 1

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

    def prometheus(self) -> str:
        """The counts in Prometheus text format, for the service's /metrics."""
        lines = [
            "# HELP odw_github_requests_total REST requests sent to GitHub.",
            "# TYPE odw_github_requests_total counter",
        ]
        for (installation, operation), n in sorted(self.snapshot().items()):
            lines.append(
                f'odw_github_requests_total{{installation="{installation}",'
                f'operation="{operation}"}} {n}'
            )
        return "\n".join(lines) + "\n"
