"""The worker's heartbeat in the database (`Store.heartbeats`), renewed from its
main loop while every thread it runs is alive.

A command reading the same database sees whether a service will act on what it
records, and whether that service runs the App (`odw app run`); `/healthz`
sees whether a delivery worker is beating at all (a worker that died, hung or
lost a thread stops renewing, and is stale after `STALE_SECONDS`, in
`app/store/heartbeats.py`).
"""

from __future__ import annotations

import logging
import secrets
import threading
import time
from collections.abc import Sequence

from app.liveness import HOST
from app.store import Store

log = logging.getLogger("odw.service")

# Renewed this often; `/healthz` counts a worker down after
# `app.store.heartbeats.STALE_SECONDS` without it.
BEAT_SECONDS = 1.0


class Pulse:
    def __init__(self, store: Store, *, acts_on_runs: bool) -> None:
        self.store = store
        self.acts_on_runs = acts_on_runs
        self.process = f"{HOST}:{secrets.token_hex(6)}"
        self._next = 0.0
        self._dead: list[str] = []

    def due(self, threads: Sequence[threading.Thread] = ()) -> None:
        """Beat when `BEAT_SECONDS` have passed since the last beat and every one
        of `threads` runs; a database that cannot be written is logged, and
        tried again on the next call."""
        now = time.monotonic()
        if now < self._next:
            return
        dead = [t.name for t in threads if not t.is_alive()]
        if dead:
            if dead != self._dead:
                log.error(
                    "worker threads died: %s; /healthz reports the worker down", ", ".join(dead)
                )
            self._dead = dead
            return
        try:
            self.store.heartbeats.beat(self.process, acts_on_runs=self.acts_on_runs)
            self._next = now + BEAT_SECONDS
        except Exception as exc:  # the database went away: the next call tries again
            log.warning("heartbeat not recorded: %s", type(exc).__name__)

    def end(self) -> None:
        try:
            self.store.heartbeats.end(self.process)
        except Exception as exc:  # stopping anyway; the row ages out
            log.warning("heartbeat not removed: %s", type(exc).__name__)
