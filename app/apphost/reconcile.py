"""The reconciler: what webhooks did not say, found by asking (at start and periodically).

GitHub never redelivers a webhook by itself, so for every open run: each live
attempt's workflow run is read again by the run id its dispatch recorded
(never by a name: anyone can start a run with any name) and, when it is still
the run `dispatched.rejection` accepts, a completed one is ingested exactly as
its `workflow_run` event would have been; a run that vanished, or one still
not finished past its stage deadline, is an infra fault; then the run's
views are brought up to date. Each run is reconciled under its lease
(`runs.run_lease`), so two processes never read and write its GitHub side at
once.
"""

from __future__ import annotations

import logging
import threading
import time

from app.apphost import api
from app.apphost.app_effects import VIEWS
from app.apphost.dispatched import Expected, rejection
from app.apphost.executor import Executor
from app.apphost.performers.base import Busy
from app.apphost.runs import RunKey, open_runs, run_lease, run_meta
from app.apphost.stage_runs import dispatch_record
from app.apphost.step import load_state, views_key
from app.core.inputs import StageFinished
from app.core.judging import Fault
from app.core.keys import attempt_key
from app.github.errors import NotFound
from app.github.protocols import Runs, WorkflowRun

log = logging.getLogger("odw.apphost")

GRACE_SECONDS = 600.0  # past a stage's deadline, for queueing and upload
# A run whose lease another executor holds is tried again this often, then
# left to the next pass.
BUSY_TRIES, BUSY_WAIT = 20, 0.25


class Reconciler:
    def __init__(self, executor: Executor, interval: float = 300.0) -> None:
        self.executor = executor
        self.interval = interval

    def run(self, stop: threading.Event) -> None:
        while not stop.is_set():
            try:
                self.pass_once()
            except Exception:
                log.exception("reconciler pass")
            stop.wait(self.interval)

    def pass_once(self) -> dict[str, int]:
        """One pass over every open run; counts of what it found."""
        found = {"ingested": 0, "vanished": 0, "overdue": 0, "runs": 0, "busy": 0}
        context = self.executor.context
        for run_id in open_runs(self.executor.store):
            found["runs"] += 1
            for _ in range(BUSY_TRIES):
                try:
                    with context.holding(run_lease(run_id), f"{run_id} is being synced"):
                        self._reconcile(run_id, found)
                    break
                except Busy:  # a view sync holds the run: they take a moment
                    time.sleep(BUSY_WAIT)
            else:
                found["busy"] += 1
        if any(found[k] for k in ("ingested", "vanished", "overdue")):
            log.info("reconciler: %s", found)
        self.executor.wake.set()
        return found

    def _reconcile(self, run_id: str, found: dict[str, int]) -> None:
        store = self.executor.store
        context = self.executor.context
        state = load_state(store, run_id)
        meta = run_meta(store, run_id)
        key = RunKey.from_json(meta["key"])
        client = context.client(key)
        for t, a in state.live_attempts():
            entry = store.outbox.get(attempt_key(run_id, t.id, a.stage, a.number, a.lane))
            record = dispatch_record(entry)
            if record is None or not record.get("workflowRun"):
                continue  # not dispatched yet (the outbox still holds it), or ambiguous
            run = self._find(client.runs, int(record["workflowRun"]))
            if run is None:
                found["vanished"] += 1
                self._fault(run_id, t.id, a.stage, a.token, "vanished (no such workflow run)")
                continue
            why = rejection(run, Expected(key.repository, t.branch, int(record["workflowRun"])))
            if why is not None:
                log.warning("reconciler: workflow run %s is not taken: %s", run.id, why)
                continue
            if run.status == "completed":
                if api.request_ingest(
                    store,
                    installation=key.installation,
                    repository=key.repository,
                    workflow_run=run.id,
                    attempt=run.run_attempt,
                    run=run,
                ):
                    found["ingested"] += 1
                continue
            age = store.clock() - float(record.get("dispatchedAt") or store.clock())
            if age > float(record.get("deadline") or 3600.0) + GRACE_SECONDS:
                found["overdue"] += 1
                self._fault(run_id, t.id, a.stage, a.token, f"overdue ({run.status})")
        store.outbox.enqueue(
            views_key(run_id, state.version) + f"/r{int(store.clock())}",
            VIEWS,
            {"run_id": run_id},
            run_id=run_id,
        )

    def _find(self, runs: Runs, workflow_run: int) -> WorkflowRun | None:
        try:
            return runs.get_run(workflow_run)
        except NotFound:
            return None

    def _fault(self, run_id: str, task: str, stage: str, token: str, why: str) -> None:
        api.submit(
            self.executor.store,
            run_id,
            StageFinished(
                at=self.executor.context.clock(),
                task=task,
                stage=stage,
                token=token,
                fault=Fault(kind="infra", detail=f"stage run {why}"),
            ),
        )
