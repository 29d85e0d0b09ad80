"""`GroupCommit`, the in-process host of `BatchWriter`: what `create_app`
stores through when it is given no other intake."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

from app.store.inbox import Inbox, NewDelivery
from app.web.intake.batch_writer import MAX_BATCH, BatchWriter

IDLE_SECONDS = 30.0


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
