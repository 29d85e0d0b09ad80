"""Which live stage attempt a workflow run belongs to, and the Actions job that ran it.

A run is an attempt's only when the attempt's dispatch recorded its id: the
executor judging a completed run and the `workflow_job` webhook noting a job
link both ask here, so the two never disagree about whose run it is.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection

from app.apphost.runs import live_attempts
from app.store import Store
from app.store.outbox import Effect as Entry


@dataclass(frozen=True)
class Attempt:
    """A live stage attempt, as its workflow run is matched to it."""

    run_id: str
    task: str
    stage: str
    number: int
    lane: str
    token: str
    branch: str
    workflow_run: int  # the run id recorded at dispatch
    dispatched_at: float | None = None  # when the dispatch was recorded (store clock)

    @property
    def slot(self) -> str:
        """The stage (and review lane) a job link is shown for."""
        return f"{self.stage}/{self.lane}" if self.lane else self.stage


def dispatch_record(entry: Entry | None) -> dict[str, Any] | None:
    """What a dispatch entry recorded once done (its run id, when, its deadline)."""
    if entry is None or entry.status != "done" or not isinstance(entry.result, dict):
        return None
    return entry.result


def attempts(store: Store, installation: int, repository: str) -> Iterator[tuple[Attempt, Any]]:
    """Each live attempt of the repository's open runs, with its dispatch entry."""
    for a in live_attempts(store, installation, repository):
        entry = store.outbox.get(a.key)
        record = dispatch_record(entry) or {}
        wf = int(record.get("workflowRun") or 0)
        at = record.get("dispatchedAt")
        attempt = Attempt(
            a.run_id, a.task, a.stage, a.attempt, a.lane, a.token, a.branch, wf,
            float(at) if isinstance(at, int | float) else None,
        )  # fmt: skip
        yield attempt, entry


def attempt_of_run(
    store: Store, installation: int, repository: str, workflow_run: int
) -> Attempt | None:
    """The live attempt whose dispatch recorded `workflow_run` as its run."""
    for attempt, _ in attempts(store, installation, repository):
        if attempt.workflow_run == workflow_run:
            return attempt
    return None


def dispatch_pending(store: Store, installation: int, repository: str) -> bool:
    """Whether a dispatch of the repository is not recorded yet (its run id unknown)."""
    return any(
        entry is not None and entry.status in ("pending", "in_flight")
        for _, entry in attempts(store, installation, repository)
    )


def job_noted(store: Store, attempt: Attempt) -> bool:
    """Whether the attempt's own run already has its job link (from `workflow_job`)."""
    row = store.projections.tasks(attempt.run_id).get(attempt.task, {})
    return row.get(f"jobRun:{attempt.slot}") == attempt.workflow_run


def note_job(
    store: Store, attempt: Attempt, html_url: str, *, tx: Connection | None = None
) -> None:
    """Link the attempt's stage (and the task) to the Actions job that ran it:
    GitHub's "Details" should land on the job, not the workflow run (bors#356)."""
    store.projections.merge_task(
        attempt.run_id,
        attempt.task,
        {
            "jobUrl": html_url,
            f"job:{attempt.slot}": html_url,
            f"jobRun:{attempt.slot}": attempt.workflow_run,
        },
        tx=tx,
    )
