"""The rule of group commit: deliveries that arrive together share one
transaction and one sync, and each caller learns whether its delivery was new.

Two hosts run it: `GroupCommit` (`group_commit.py`), a writer thread inside
the process that serves, and the `odw intake` process (`process.py`). Nothing
waits on purpose: under a trickle each delivery commits alone; under a burst
the syncs are shared.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Sequence

from sqlalchemy import Connection

from app.store.engine import ACKNOWLEDGING, is_sqlite, write_transaction_on
from app.store.inbox import Inbox, NewDelivery
from app.web.intake.checkpointer import CHECKPOINT_QUIET_SECONDS, Checkpointer

log = logging.getLogger("odw.intake")

MAX_BATCH = 256


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
