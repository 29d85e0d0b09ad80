"""The one retry layer between ODW and GitHub (PyGithub's own retry is off).

Waits follow GitHub's guidance on rate limits
(https://docs.github.com/en/rest/using-the-rest-api/rate-limits-for-the-rest-api):
primary limit, wait until `x-ratelimit-reset`; secondary limit, obey
`retry-after`, else wait at least a minute and back off exponentially; 5xx and
connection failures back off exponentially with jitter under a cap. Anything
else is not transient and is never retried.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import Enum


class Transience(Enum):
    PRIMARY_LIMIT = "primary rate limit"
    SECONDARY_LIMIT = "secondary rate limit"
    SERVER = "server error"
    CONNECTION = "connection error"
    PERMANENT = "permanent"


def _header(headers: Mapping[str, str] | None, name: str) -> str | None:
    for key, value in (headers or {}).items():
        if key.lower() == name:
            return str(value)
    return None


def classify(status: int, headers: Mapping[str, str] | None, message: str = "") -> Transience:
    """What kind of failure a response is; `status` 0 means no response at all."""
    if status == 0:
        return Transience.CONNECTION
    if status in (403, 429):
        if _header(headers, "retry-after") is not None:
            return Transience.SECONDARY_LIMIT
        if _header(headers, "x-ratelimit-remaining") == "0":
            return Transience.PRIMARY_LIMIT
        if "secondary rate limit" in message.lower():
            return Transience.SECONDARY_LIMIT
        return Transience.SERVER if status == 429 else Transience.PERMANENT
    if status >= 500:
        return Transience.SERVER
    return Transience.PERMANENT


@dataclass(frozen=True)
class RetryPolicy:
    """How long to wait before attempt `attempt + 1`, or None to give up."""

    max_attempts: int = 6
    backoff_base: float = 1.0
    backoff_cap: float = 60.0
    secondary_default: float = 60.0
    longest_wait: float = 3900.0  # a primary reset is at most an hour away
    jitter: Callable[[], float] = field(default=random.random, compare=False)

    def wait(
        self,
        kind: Transience,
        attempt: int,
        headers: Mapping[str, str] | None,
        now: float,
    ) -> float | None:
        if kind is Transience.PERMANENT or attempt >= self.max_attempts:
            return None
        if kind is Transience.PRIMARY_LIMIT:
            reset = _header(headers, "x-ratelimit-reset")
            wait = max(0.0, float(reset) - now) if reset and reset.isdigit() else 60.0
        elif kind is Transience.SECONDARY_LIMIT:
            after = _header(headers, "retry-after")
            if after is not None and after.strip().isdigit():
                wait = float(after)
            else:
                wait = self.secondary_default * 2 ** (attempt - 1)
        else:
            exp = min(self.backoff_cap, self.backoff_base * 2 ** (attempt - 1))
            wait = exp * (0.5 + self.jitter() / 2)
        return wait if wait <= self.longest_wait else None
