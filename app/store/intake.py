"""Group commit for the inbox: deliveries that arrive together share one
transaction and one sync, and each is answered only after that sync.

`BatchWriter` is the rule: one kept connection, one multi-row insert per
batch, each caller told whether its delivery was new. Two hosts run it:
`GroupCommit`, a writer thread inside the process that serves (what
`create_app` uses on its own), and the intake process of `odw serve`
(`app/store/intake_server.py`), which takes the deliveries of every HTTP
process over a local socket and commits without sharing an interpreter with
request threads. Nothing waits on purpose: under a trickle each delivery
commits alone; under a burst the syncs are shared.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

from sqlalchemy import Connection, Engine

from app.store.engine import ACKNOWLEDGING, is_sqlite, write_transaction_on
from app.store.inbox import Inbox, NewDelivery

log = logging.getLogger("odw.intake")

MAX_BATCH = 256
IDLE_SECONDS = 30.0
# When an SQLite writer's WAL is folded back into the database (its own
# commits never do it: see ACKNOWLEDGING): once no delivery has come for this
# long, or once this much has been written since the last fold, whatever
# the traffic. A fold copies what was written and syncs: under a burst it
# would stall the commits that answer senders.
CHECKPOINT_QUIET_SECONDS = 0.25
CHECKPOINT_MAX_BYTES = 64 << 20


class Intake(Protocol):
    """What the webhook edge stores through: `record` returns once the
    delivery is durably stored (True) or found stored already (False), and
    raises when it could not be stored."""

    def record(self, delivery: NewDelivery) -> bool: ...

    def ready(self) -> bool:
        """Whether a delivery sent now would be taken (for `/healthz`)."""
        ...


class BatchWriter:
    """Stores batches on one kept connection (no pool round trip per commit),
    as acknowledging writes: on SQLite they go before other writers and a
    checkpointer thread takes checkpoints off their commits."""

    def __init__(self, inbox: Inbox, quiet_seconds: float = CHECKPOINT_QUIET_SECONDS) -> None:
        self.inbox = inbox
        self.quiet_seconds = quiet_seconds
        self._conn: Connection | None = None
        self._checkpointer: Checkpointer | None = None

    def write(self, batch: Sequence[NewDelivery]) -> list[bool | Exception]:
        """Per delivery, in order: new (True), already stored (False; within
        the batch the first of an id counts), or the error that kept it out."""
        if not batch:
            return []
        try:
            if self._conn is None:
                self._conn = self.inbox.engine.connect().execution_options(**ACKNOWLEDGING)
                if is_sqlite(self.inbox.engine) and self._checkpointer is None:
                    self._checkpointer = Checkpointer(self.inbox.engine, self.quiet_seconds)
            with write_transaction_on(self._conn) as tx:
                stored = self.inbox.record_many(batch, tx=tx)
        except Exception as exc:
            self.close(broken=True)
            if len(batch) == 1:
                return [exc]
            # One row the database refuses must not fail its neighbours.
            log.warning("batch of %d failed (%s); storing one by one", len(batch), exc)
            return [result for one in batch for result in self.write([one])]
        if self._checkpointer is not None:
            self._checkpointer.wrote(sum(len(d.body) for d in batch))
        seen: set[str] = set()
        results: list[bool | Exception] = []
        for d in batch:
            results.append(d.id in stored and d.id not in seen)
            seen.add(d.id)
        return results

    def close(self, broken: bool = False) -> None:
        """Drop the kept connection; after a failure it may be broken."""
        if not broken and self._checkpointer is not None:
            self._checkpointer.stop()
            self._checkpointer = None
        conn, self._conn = self._conn, None
        if conn is not None:
            with contextlib.suppress(Exception):
                if broken:
                    conn.invalidate()
                conn.close()


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


@dataclass
class _Waiting:
    delivery: NewDelivery
    done: threading.Event = field(default_factory=threading.Event)
    new: bool = False
    error: BaseException | None = None


class GroupCommit:
    """The in-process host: one writer thread takes everything queued while
    the previous commit was syncing. `record` blocks until its delivery is
    stored or refused (see `Intake`)."""

    def __init__(self, inbox: Inbox, max_batch: int = MAX_BATCH) -> None:
        self.max_batch = max_batch
        self._cond = threading.Condition(threading.Lock())
        self._queue: list[_Waiting] = []
        self._thread: threading.Thread | None = None
        self._writer = BatchWriter(inbox)

    def record(self, delivery: NewDelivery) -> bool:
        waiting = _Waiting(delivery)
        with self._cond:
            if self._thread is None or not self._thread.is_alive():
                # Started on first use, so it lives in the process that serves
                # (gunicorn forks after the app is built).
                self._thread = threading.Thread(
                    target=self._run, name="odw-inbox-writer", daemon=True
                )
                self._thread.start()
            self._queue.append(waiting)
            self._cond.notify()
        waiting.done.wait()
        if waiting.error is not None:
            raise waiting.error
        return waiting.new

    def ready(self) -> bool:
        return True  # the writer thread starts with the first delivery

    def _run(self) -> None:
        while True:
            with self._cond:
                if not self._queue:
                    self._cond.wait(IDLE_SECONDS)
                if not self._queue:
                    # Idle: give the connection back; the next record starts afresh.
                    self._thread = None
                    self._writer.close()
                    return
                batch = self._queue[: self.max_batch]
                del self._queue[: self.max_batch]
            results = self._writer.write([w.delivery for w in batch])
            for w, result in zip(batch, results, strict=True):
                if isinstance(result, Exception):
                    w.error = result
                else:
                    w.new = result
                w.done.set()
