"""Read models of runs, folded from the event log by the core and saved here in the
same transaction as the events they reflect. `run_tasks` holds, per run and task,
what the App host has shown on GitHub for it (pull request, check run and
comment ids, digests of what was posted); task id "" is the run itself."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection, select, update

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

    def merge_task(
        self,
        run_id: str,
        task_id: str,
        values: dict[str, Any],
        *,
        status: str | None = None,
        tx: Connection | None = None,
    ) -> dict[str, Any]:
        """Set some keys of a task's row in one transaction and return the whole row.

        The row is shared: the view syncer saves check and comment ids while the
        executor notes job URLs and webhooks note closed pull requests. A writer
        that read the row, changed one key and wrote it all back would undo what
        another saved in between (a check run id lost is a check left spinning),
        so every writer merges only its own keys, under the row's lock.
        """
        key = (run_tasks.c.run_id == run_id) & (run_tasks.c.task_id == task_id)
        with self._tx(tx) as conn:
            empty = {"run_id": run_id, "task_id": task_id, "status": status or "shown"}
            conn.execute(
                self._insert(run_tasks)
                .values(**empty, data="{}", updated_at=self.clock())
                .on_conflict_do_nothing(index_elements=["run_id", "task_id"])
            )
            row = conn.execute(
                select(run_tasks.c.status, run_tasks.c.data).where(key).with_for_update()
            ).one()
            data = {**(loads(row.data) or {}), **values}
            conn.execute(
                update(run_tasks)
                .where(key)
                .values(status=status or row.status, data=dumps(data), updated_at=self.clock())
            )
        return data

    def tasks(self, run_id: str, *, tx: Connection | None = None) -> dict[str, dict[str, Any]]:
        """Task id -> its saved data, for one run."""
        with self._read(tx) as conn:
            rows = conn.execute(select(run_tasks).where(run_tasks.c.run_id == run_id))
            return {r.task_id: loads(r.data) for r in rows}
