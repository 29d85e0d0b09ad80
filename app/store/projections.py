"""Read models of runs, folded from the event log by the core and saved here in the
same transaction as the events they reflect. A run's row may carry a snapshot of
its state (JSON the core wrote, as of a log version); `live_attempts` lists the
App's live stage attempts by repository. `run_tasks` holds, per run and task,
what the App host has shown on GitHub for it (pull request, check run and
comment ids, digests of what was posted); task id "" is the run itself."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from sqlalchemy import Connection, delete, select, update

from app.store.base import Part, dumps, loads
from app.store.schema import live_attempts, run_tasks, runs


@dataclass(frozen=True)
class RunView:
    run_id: str
    version: int
    status: str
    data: dict[str, Any]
    updated_at: float


@dataclass(frozen=True)
class Snapshot:
    """A run's state as of log `version`, as the text its writer made."""

    version: int
    state: str


@dataclass(frozen=True)
class LiveAttemptRow:
    key: str
    run_id: str
    task: str
    stage: str
    attempt: int
    lane: str
    token: str
    branch: str


class Projections(Part):
    def put_run(
        self,
        run_id: str,
        version: int,
        status: str,
        data: dict[str, Any],
        *,
        state: str | None = None,
        tx: Connection | None = None,
    ) -> None:
        """Save the run's view as of log `version` (with `state`, the snapshot of
        the run's state at that version); an older version never overwrites a newer one."""
        values = {
            "run_id": run_id,
            "version": version,
            "status": status,
            "data": dumps(data),
            "updated_at": self.clock(),
        }
        columns = ["version", "status", "data", "updated_at"]
        if state is not None:
            values.update(state=state, state_version=version)
            columns += ["state", "state_version"]
        stmt = self._insert(runs).values(**values)
        stmt = stmt.on_conflict_do_update(
            index_elements=["run_id"],
            set_={k: stmt.excluded[k] for k in columns},
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

    def snapshot(self, run_id: str, *, tx: Connection | None = None) -> Snapshot | None:
        """The run's last saved state snapshot, if any."""
        q = select(runs.c.state_version, runs.c.state).where(runs.c.run_id == run_id)
        with self._read(tx) as conn:
            row = conn.execute(q).one_or_none()
        if row is None or row.state is None or row.state_version is None:
            return None
        return Snapshot(int(row.state_version), row.state)

    def unsnapshotted(self, *, status: str) -> list[RunView]:
        """Runs of `status` with no snapshot yet (saved before snapshots existed)."""
        q = select(runs).where(runs.c.status == status, runs.c.state_version.is_(None))
        with self._read(None) as conn:
            return [
                RunView(r.run_id, r.version, r.status, loads(r.data), r.updated_at)
                for r in conn.execute(q.order_by(runs.c.run_id))
            ]

    def put_attempts(
        self,
        run_id: str,
        installation: int,
        repository: str,
        attempts: Sequence[LiveAttemptRow],
        *,
        tx: Connection | None = None,
    ) -> None:
        """The run's live attempts are now `attempts` (none once it ended)."""
        rows = [
            {**asdict(a), "installation_id": installation, "repository": repository}
            for a in attempts
        ]
        with self._tx(tx) as conn:
            conn.execute(delete(live_attempts).where(live_attempts.c.run_id == run_id))
            if rows:
                # An upsert: a writer that indexed the run meanwhile is overwritten,
                # never a cause of failure (the newest state's rows win).
                stmt = self._insert(live_attempts).values(rows)
                conn.execute(
                    stmt.on_conflict_do_update(
                        index_elements=["key"],
                        set_={k: stmt.excluded[k] for k in rows[0] if k != "key"},
                    )
                )

    def attempts(
        self, installation: int, repository: str, *, tx: Connection | None = None
    ) -> list[LiveAttemptRow]:
        """The live attempts of every run of one repository, by key."""
        t = live_attempts.c
        q = (
            select(t.key, t.run_id, t.task, t.stage, t.attempt, t.lane, t.token, t.branch)
            .where(t.installation_id == installation, t.repository == repository)
            .order_by(t.key)
        )
        with self._read(tx) as conn:
            return [LiveAttemptRow(*row) for row in conn.execute(q)]

    def runs(self, *, status: str | None = None) -> list[RunView]:
        q = select(runs).order_by(runs.c.run_id)
        if status is not None:
            q = q.where(runs.c.status == status)
        with self._read(None) as conn:
            return [
                RunView(r.run_id, r.version, r.status, loads(r.data), r.updated_at)
                for r in conn.execute(q)
            ]

    def latest(self, limit: int, *, status: str) -> list[RunView]:
        """The `limit` runs of `status` updated last, newest first."""
        q = (
            select(runs)
            .where(runs.c.status == status)
            .order_by(runs.c.updated_at.desc(), runs.c.run_id)
            .limit(limit)
        )
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
