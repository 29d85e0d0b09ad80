"""Waiting for a pull request head's required checks.

`check_suite`, `check_run` and `status` webhooks poke `ChecksWake` with the
head SHA they are about, so a waiting landing re-reads the states at once; a
read every `poll` seconds is the fallback when a delivery is late or lost.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass


class ChecksWake:
    """Head SHAs whose checks changed, for waiters to wake on."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._pokes: dict[str, int] = {}

    def poke(self, sha: str) -> None:
        with self._cond:
            self._pokes[sha] = self._pokes.get(sha, 0) + 1
            self._cond.notify_all()

    def seen(self, sha: str) -> int:
        with self._cond:
            return self._pokes.get(sha, 0)

    def wait(self, sha: str, after: int, timeout: float) -> None:
        """Until `sha` is poked past `after`, or `timeout` seconds."""
        with self._cond:
            self._cond.wait_for(lambda: self._pokes.get(sha, 0) > after, timeout)


# The process's wake-ups: the webhook handlers poke it, App landings wait on it.
CHECKS_WAKE = ChecksWake()


@dataclass(frozen=True)
class ChecksVerdict:
    passed: bool
    detail: str


def wait_for_checks(
    states: Callable[[str], dict[str, str]],
    required: Sequence[str] | None,
    sha: str,
    *,
    timeout: float,
    poll: float,
    wake: ChecksWake | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> ChecksVerdict:
    """Whether every required check of `sha` passed. With `required` unknown
    (None), every check present must finish without failing."""
    deadline = clock() + timeout
    while True:
        seen = wake.seen(sha) if wake else 0
        found = states(sha)
        names = list(required) if required is not None else sorted(found)
        failed = [n for n in names if found.get(n) == "failure"]
        if failed:
            return ChecksVerdict(False, f"required check {failed[0]!r} failed on {sha[:12]}")
        waiting = [n for n in names if found.get(n) != "success"]
        if not waiting:
            return ChecksVerdict(True, "checks passed" if names else "no required checks")
        left = deadline - clock()
        if left <= 0:
            return ChecksVerdict(
                False,
                f"timed out waiting for {', '.join(repr(n) for n in waiting)} on {sha[:12]}",
            )
        if wake is not None:
            wake.wait(sha, seen, min(poll, left))
        else:
            time.sleep(min(poll, left))
