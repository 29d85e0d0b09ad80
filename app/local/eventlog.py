"""The run's event log in the store, with the run's projection in the same transaction.

The projection's status (`running` until a `run-ended` event, then `finished`)
is how a rerun of the same command finds the run to resume: it is written with
the events it reflects, so the two can never disagree after a crash.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from app.store import Store

RUNNING, FINISHED = "running", "finished"
Listener = Callable[[Sequence[dict[str, Any]]], None]


class StoreEventLog:
    """`EventLog` over `store.events` for one run id."""

    def __init__(
        self,
        store: Store,
        run_id: str,
        meta: dict[str, Any],
        listener: Listener | None = None,
    ) -> None:
        self.store = store
        self.run_id = run_id
        self.meta = meta
        self.listener = listener
        self.ended = False

    def load(self) -> list[dict[str, Any]]:
        rows = self.store.events.load(self.run_id)
        self.ended = any(r.get("type") == "run-ended" for r in rows)
        if self.listener is not None and rows:
            self.listener(rows)
        return rows

    def append(self, events: Sequence[dict[str, Any]], expected_version: int) -> int:
        self.ended = self.ended or any(e.get("type") == "run-ended" for e in events)
        with self.store.transaction() as tx:
            version = self.store.events.append(self.run_id, list(events), expected_version, tx=tx)
            self.store.projections.put_run(
                self.run_id, version, FINISHED if self.ended else RUNNING, self.meta, tx=tx
            )
        if self.listener is not None:
            self.listener(events)
        return version


def unfinished_run(store: Store, base: str) -> str | None:
    """The newest run on `base` whose log has no end yet."""
    views = [v for v in store.projections.runs(status=RUNNING) if v.data.get("base") == base]
    views.sort(key=lambda v: (v.data.get("startedAt") or "", v.run_id))
    return views[-1].run_id if views else None
