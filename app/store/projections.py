"""Read models of runs, folded from the event log by the core and saved here in the
same transaction as the events they reflect. `run_tasks` holds, per run and task,
what the App host has shown on GitHub for it (pull request, check run and
comment ids, digests of what was posted); task id "" is the run itself."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection, select

from app.store.base import Part, dumps, loads
from app.store.schema import run_tasks, runs


@dataclass(frozen=True)
class RunView:
    run_id: str
    version: int
    status: str
    data: dict[str, Any]
    updated_at: float


class Projections(Part):
    def put_run(
        self,
        run_id: str,
        version: int,
        status: str,
        data: dict[str, Any],
        *,
        tx: Connection | None = None,
    ) -> None:
        """Save the run's view as of log `version`; an older version never
        overwrites a newer one."""
        values = {
            "run_id": run_id,
            "version": version,
            "status": status,
            "data": dumps(data),
            "updated_at": self.clock(),
        }
        stmt = self._insert(runs).values(**values)
        stmt = stmt.on_conflict_do_update(
            index_elements=["run_id"],
            set_={k: stmt.excluded[k] for k in ("version", "status", "data", "updated_at")},
            where=runs.c.version <= stmt.excluded.version,
        )
        with self._tx(tx) as conn:
            conn.execute(stmt)

    def run(self, run_id: str, *, tx: Connection | None = None) -> RunView | None:
        with self._read(tx) as conn:
            row = conn.execute(select(runs).where(runs.c.run_id == run_id)).one_or_none()
        if row is None:
            return None
        return RunView(row.run_id, row.version, row.status, loads(row.data), row.updated_at)

    def runs(self, *, status: str | None = None) -> list[RunView]:
        q = select(runs).order_by(runs.c.run_id)
        if status is not None:
            q = q.where(runs.c.status == status)
        with self._read(None) as conn:
            return [
                RunView(r.run_id, r.version, r.status, loads(r.data), r.updated_at)
                for r in conn.execute(q)
            ]

    def put_task(
        self,
        run_id: str,
        task_id: str,
        status: str,
        data: dict[str, Any],
        *,
        tx: Connection | None = None,
    ) -> None:
        values = {
            "run_id": run_id,
            "task_id": task_id,
            "status": status,
            "data": dumps(data),
            "updated_at": self.clock(),
        }
        stmt = self._insert(run_tasks).values(**values)
        stmt = stmt.on_conflict_do_update(
            index_elements=["run_id", "task_id"],
            set_={k: stmt.excluded[k] for k in ("status", "data", "updated_at")},
        )
        with self._tx(tx) as conn:
            conn.execute(stmt)

    def tasks(self, run_id: str, *, tx: Connection | None = None) -> dict[str, dict[str, Any]]:
        """Task id -> its saved data, for one run."""
        with self._read(tx) as conn:
            rows = conn.execute(select(run_tasks).where(run_tasks.c.run_id == run_id))
            return {r.task_id: loads(r.data) for r in rows}
