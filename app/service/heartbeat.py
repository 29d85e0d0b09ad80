"""The worker's heartbeat in the database (`Store.heartbeats`), renewed from its
main loop: a command reading the same database sees whether a service will act
on what it records, and whether that service runs the App."""

from __future__ import annotations

import logging
import secrets
import time

from app.liveness import HOST
from app.store import Store

log = logging.getLogger("odw.service")

BEAT_SECONDS = 5.0


class Pulse:
    def __init__(self, store: Store, *, acts_on_runs: bool) -> None:
        self.store = store
        self.acts_on_runs = acts_on_runs
        self.process = f"{HOST}:{secrets.token_hex(6)}"
        self._next = 0.0

    def due(self) -> None:
        """Beat when `BEAT_SECONDS` have passed since the last beat; a database
        that cannot be written is logged, and tried again on the next call."""
        now = time.monotonic()
        if now < self._next:
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
