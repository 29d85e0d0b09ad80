"""Fault injection: per route, the next N requests answer a chosen failure."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Fault:
    status: int
    headers: dict[str, str] = field(default_factory=dict)
    body: dict[str, Any] = field(default_factory=dict)
    delay: float = 0.0
    after: bool = False  # handle the request, then answer the failure


def server_error_after_write(status: int = 500) -> Fault:
    """The request did its work but the answer is an error (merged, then 500)."""
    return Fault(status, body={"message": "Server Error"}, after=True)


def server_error(status: int = 500) -> Fault:
    return Fault(status, body={"message": "Server Error"})


def secondary_limit(retry_after: int | None = 3) -> Fault:
    headers = {"retry-after": str(retry_after)} if retry_after is not None else {}
    return Fault(
        403,
        headers,
        {"message": "You have exceeded a secondary rate limit. Please wait a few minutes."},
    )


def primary_limit(reset: int, status: int = 403) -> Fault:
    return Fault(
        status,
        {
            "x-ratelimit-limit": "5000",
            "x-ratelimit-remaining": "0",
            "x-ratelimit-used": "5000",
            "x-ratelimit-reset": str(reset),
        },
        {"message": "API rate limit exceeded for installation."},
    )


def delay(seconds: float) -> Fault:
    return Fault(0, delay=seconds)


class Faults:
    def __init__(self) -> None:
        self._queued: dict[tuple[str, str], list[Fault]] = {}
        self._lock = threading.Lock()

    def inject(self, method: str, template: str, fault: Fault, times: int = 1) -> None:
        with self._lock:
            self._queued.setdefault((method.upper(), template), []).extend([fault] * times)

    def take(self, method: str, template: str) -> Fault | None:
        """The next fault for a route; a delay fault is served after the request
        was handled (the write happened, the answer is late)."""
        with self._lock:
            queue = self._queued.get((method.upper(), template))
            return queue.pop(0) if queue else None


def late(fault: Fault | None) -> None:
    if fault is not None and fault.delay:
        time.sleep(fault.delay)
