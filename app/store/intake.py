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
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

from sqlalchemy import Connection

from app.store.engine import write_transaction_on
from app.store.inbox import Inbox, NewDelivery

log = logging.getLogger("odw.intake")

MAX_BATCH = 256
IDLE_SECONDS = 30.0


class Intake(Protocol):
    """What the webhook edge stores through: `record` returns once the
    delivery is durably stored (True) or found stored already (False), and
    raises when it could not be stored."""

    def record(self, delivery: NewDelivery) -> bool: ...

    def ready(self) -> bool:
        """Whether a delivery sent now would be taken (for `/healthz`)."""
        ...


class BatchWriter:
    """Stores batches on one kept connection (no pool round trip per commit)."""

    def __init__(self, inbox: Inbox) -> None:
        self.inbox = inbox
        self._conn: Connection | None = None

    def write(self, batch: Sequence[NewDelivery]) -> list[bool | Exception]:
        """Per delivery, in order: new (True), already stored (False; within
        the batch the first of an id counts), or the error that kept it out."""
        if not batch:
            return []
        try:
            if self._conn is None:
                self._conn = self.inbox.engine.connect()
            with write_transaction_on(self._conn) as tx:
                stored = self.inbox.record_many(batch, tx=tx)
        except Exception as exc:
            self.close(broken=True)
            if len(batch) == 1:
                return [exc]
            # One row the database refuses must not fail its neighbours.
            log.warning("batch of %d failed (%s); storing one by one", len(batch), exc)
            return [result for one in batch for result in self.write([one])]
        seen: set[str] = set()
        results: list[bool | Exception] = []
        for d in batch:
            results.append(d.id in stored and d.id not in seen)
            seen.add(d.id)
        return results

    def close(self, broken: bool = False) -> None:
        """Drop the kept connection; after a failure it may be broken."""
        conn, self._conn = self._conn, None
        if conn is not None:
            with contextlib.suppress(Exception):
                if broken:
                    conn.invalidate()
                conn.close()


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
