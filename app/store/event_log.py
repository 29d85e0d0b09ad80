"""Per-run append-only event log with optimistic concurrency.

Events are plain JSON-serialisable dicts (`{"type": ..., "version": ..., ...}`);
the core owns their meaning. A writer states the version it read; if another
writer got there first the append is refused with `ConcurrencyError`, never
merged, and the caller reloads and decides again.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import Connection, func, select
from sqlalchemy.exc import IntegrityError

from app.engine.ports import ConcurrencyError
from app.store.base import Part, dumps, loads
from app.store.schema import run_events


class EventLog(Part):
    def append(
        self,
        run_id: str,
        events: Sequence[dict[str, Any]],
        expected_version: int,
        *,
        tx: Connection | None = None,
    ) -> int:
        """Append `events` after `expected_version`; return the new version."""
        rows = []
        for offset, ev in enumerate(events, start=1):
            if not isinstance(ev, dict) or not isinstance(ev.get("type"), str):
                raise ValueError(f"event {offset} for run {run_id} has no string 'type'")
            version = ev.get("version")
            rows.append(
                {
                    "run_id": run_id,
                    "seq": expected_version + offset,
                    "type": ev["type"],
                    "version": version if isinstance(version, int) else None,
                    "data": dumps(ev),
                    "recorded_at": self.clock(),
                }
            )
        try:
            with self._tx(tx) as conn:
                actual = self._version(conn, run_id)
                if actual != expected_version:
                    raise ConcurrencyError(expected_version, actual, run_id=run_id)
                if rows:
                    # The primary key (run_id, seq) refuses a racing writer that
                    # read the same version, whatever the isolation level.
                    conn.execute(run_events.insert(), rows)
        except IntegrityError:
            raise ConcurrencyError(expected_version, None, run_id=run_id) from None
        return expected_version + len(rows)

    def load(
        self,
        run_id: str,
        after: int = 0,
        *,
        until: int | None = None,
        types: Sequence[str] = (),
        tx: Connection | None = None,
    ) -> list[dict[str, Any]]:
        """Events with sequence number greater than `after` (and at most `until`),
        oldest first; only those of `types` when given (read by the indexed column,
        not by unpacking every event)."""
        q = select(run_events.c.data).where(run_events.c.run_id == run_id, run_events.c.seq > after)
        if until is not None:
            q = q.where(run_events.c.seq <= until)
        if types:
            q = q.where(run_events.c.type.in_(types))
        with self._read(tx) as conn:
            return [loads(data) for (data,) in conn.execute(q.order_by(run_events.c.seq))]

    def version(self, run_id: str, *, tx: Connection | None = None) -> int:
        with self._read(tx) as conn:
            return self._version(conn, run_id)

    @staticmethod
    def _version(conn: Connection, run_id: str) -> int:
        q = select(func.coalesce(func.max(run_events.c.seq), 0)).where(
            run_events.c.run_id == run_id
        )
        return int(conn.execute(q).scalar_one())
