"""Folding an SQLite writer's WAL back into the database off the commits
that answer senders (their own commits never do it: see `ACKNOWLEDGING` in
`app.store.engine`)."""

from __future__ import annotations

import logging
import threading
import time

from sqlalchemy import Engine

log = logging.getLogger("odw.intake")

# A fold runs once no delivery has come for this long, or once this much has
# been written since the last fold, whatever the traffic. A fold copies what
# was written and syncs: under a burst it would stall the commits that answer
# senders.
CHECKPOINT_QUIET_SECONDS = 0.25
CHECKPOINT_MAX_BYTES = 64 << 20


class Checkpointer:
    """A thread folding an SQLite database's WAL back into it when the writer
    it serves is quiet for `quiet_seconds`, or has written `max_bytes` since
    the last fold. On a connection of its own, PASSIVE: it waits for nobody,
    and writers go on meanwhile. A last fold runs when it is stopped."""

    def __init__(
        self, engine: Engine, quiet_seconds: float, max_bytes: int = CHECKPOINT_MAX_BYTES
    ) -> None:
        self.engine = engine
        self.quiet_seconds = quiet_seconds
        self.max_bytes = max_bytes
        self._lock = threading.Lock()
        self._unfolded = 0
        self._last_write = 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="odw-checkpoint", daemon=True)
        self._thread.start()

    def wrote(self, size: int) -> None:
        with self._lock:
            self._unfolded += size
            self._last_write = time.monotonic()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        while not self._stop.wait(self.quiet_seconds):
            with self._lock:
                due = self._unfolded > 0 and (
                    self._unfolded >= self.max_bytes
                    or time.monotonic() - self._last_write >= self.quiet_seconds
                )
                if due:
                    self._unfolded = 0
            if due:
                self.fold()
        self.fold()

    def fold(self) -> None:
        try:
            raw = self.engine.raw_connection()
            try:
                # The driver connection runs without an implicit transaction
                # (see the engine's connect hook), as a checkpoint needs.
                raw.driver_connection.execute("PRAGMA wal_checkpoint(PASSIVE)")  # type: ignore[union-attr]
            finally:
                raw.close()
        except Exception as exc:  # the next round tries again
            log.warning("WAL checkpoint failed: %s", exc)
