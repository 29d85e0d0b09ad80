"""Group commit for the inbox: deliveries that arrive together share one
transaction and one sync, and each is answered only after that sync.

One writer thread per process takes everything queued while the previous
commit was syncing and stores it with `Inbox.record_many`. Nothing waits on
purpose: under a trickle each delivery commits alone (as fast as before);
under a burst the syncs are shared, which is where the time went.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass, field

from app.store.inbox import Inbox, NewDelivery

log = logging.getLogger("odw.intake")

MAX_BATCH = 256


@dataclass
class _Waiting:
    delivery: NewDelivery
    done: threading.Event = field(default_factory=threading.Event)
    new: bool = False
    error: BaseException | None = None


class GroupCommit:
    """`record(delivery)` blocks until the delivery is durably stored (True)
    or found already stored (False); a database error is raised to the caller."""

    def __init__(self, inbox: Inbox, max_batch: int = MAX_BATCH) -> None:
        self.inbox = inbox
        self.max_batch = max_batch
        self._cond = threading.Condition(threading.Lock())
        self._queue: list[_Waiting] = []
        self._thread: threading.Thread | None = None

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

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._queue:
                    self._cond.wait()
                batch = self._queue[: self.max_batch]
                del self._queue[: self.max_batch]
            self._commit(batch)

    def _commit(self, batch: list[_Waiting]) -> None:
        try:
            stored = self.inbox.record_many([w.delivery for w in batch])
        except Exception as exc:
            if len(batch) > 1:
                # One row the database refuses must not fail its neighbours.
                log.warning("batch of %d failed (%s); storing one by one", len(batch), exc)
                for one in batch:
                    self._commit([one])
                return
            batch[0].error = exc
            batch[0].done.set()
            return
        seen: set[str] = set()
        for w in batch:
            w.new = w.delivery.id in stored and w.delivery.id not in seen
            seen.add(w.delivery.id)
            w.done.set()
