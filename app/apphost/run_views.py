"""The App's runs as an operator reads them: one model for `odw status` (text)
and the dashboard (HTML).

Pure functions turn the store's rows (a run's saved view, its tasks' saved
handles) into plain frozen dataclasses; only `list_runs` and `run_detail`
read the store. What a run says comes from the core's `run_result`, saved
with the run at each step, so nothing here folds events or calls GitHub.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from app.store import Store
from app.store.projections import RunView

# Task statuses in the order a reader wants their counts.
STATUS_ORDER = (
    "running", "pending", "blocked", "failed", "infra-fault", "deferred",
    "manual-merge-ready", "landed",
)  # fmt: skip


@dataclass(frozen=True)
class VerdictLine:
    """A task's last judged stage attempt."""

    stage: str  # with its lane: `review/a`
    attempt: int
    outcome: str
    detail: str


@dataclass(frozen=True)
class TaskLine:
    id: str
    status: str
    stage: str | None
    attempts: Mapping[str, int]  # stage -> attempts in the task's current retry cycle
    detail: str
    branch: str
    verdict: VerdictLine | None
    assessment: str | None  # the failed branch's classification, once assessed
    salvage: Mapping[str, Any] | None  # what was kept of a failed write stage
    sha: str | None  # the landed commit
    pull_url: str | None
    check_url: str | None
    job_url: str | None


@dataclass(frozen=True)
class RunLine:
    run_id: str
    repository: str
    base: str
    installation: int | None
    status: str  # running, finished, or halted (open but stopped, nothing running)
    halted: str | None  # the reason, whenever the run says it stopped
    tasks_by_status: Mapping[str, int]  # in STATUS_ORDER, then any other, only non-zero
    fault_metrics: Mapping[str, int]
    summary: str
    updated_at: float
    tasks: tuple[TaskLine, ...]

    @property
    def progress(self) -> str:
        """The tasks in one line, landed first: `1 of 3 landed · 1 blocked · 1 failed`."""
        total = sum(self.tasks_by_status.values())
        if not total:
            return "no tasks"
        rest = [f"{n} {s}" for s, n in self.tasks_by_status.items() if s != "landed"]
        return " · ".join([f"{self.tasks_by_status.get('landed', 0)} of {total} landed", *rest])


def shown_status(status: str, result: Mapping[str, Any]) -> str:
    """An open run that stopped and runs nothing is `halted`, not `running`:
    the store keeps it open (a move can resume it), but nothing moves until then."""
    running = any(r.get("status") == "running" for r in result.get("results", []))
    return "halted" if status == "running" and result.get("halted") and not running else status


def run_line(view: RunView, handles: Mapping[str, Mapping[str, Any]] | None = None) -> RunLine:
    """A run from its saved view and (optionally) its tasks' saved handles."""
    key = view.data.get("key") or {}
    result = view.data.get("result") or {}
    tasks = tuple(
        task_line(r, (handles or {}).get(str(r["id"]), {})) for r in result.get("results", [])
    )
    counts = Counter(t.status for t in tasks)
    ordered = [s for s in STATUS_ORDER if counts[s]] + sorted(set(counts) - set(STATUS_ORDER))
    return RunLine(
        run_id=view.run_id,
        repository=str(key.get("repository", "")),
        base=str(key.get("base", result.get("base") or "")),
        installation=int(key["installation"]) if key.get("installation") is not None else None,
        status=shown_status(view.status, result),
        halted=result.get("halted") or None,
        tasks_by_status={s: counts[s] for s in ordered},
        fault_metrics=dict(result.get("faultMetrics") or {}),
        summary=str(result.get("summary") or ""),
        updated_at=view.updated_at,
        tasks=tasks,
    )


def task_line(result: Mapping[str, Any], handles: Mapping[str, Any]) -> TaskLine:
    """A task from its entry in the run's result and its saved handles."""
    verdict = result.get("verdict")
    assessment = result.get("assessment") or {}
    return TaskLine(
        id=str(result["id"]),
        status=str(result["status"]),
        stage=result.get("stage"),
        attempts=dict(result.get("attempts") or {}),
        detail=str(result.get("detail") or ""),
        branch=str(result.get("branch") or ""),
        verdict=_verdict(verdict) if isinstance(verdict, Mapping) else None,
        assessment=assessment.get("classification"),
        salvage=result.get("salvage"),
        sha=result.get("sha"),
        pull_url=handles.get("pullUrl"),
        check_url=handles.get("checkUrl"),
        job_url=handles.get("jobUrl"),
    )


def _verdict(v: Mapping[str, Any]) -> VerdictLine:
    lane = str(v.get("lane") or "")
    stage = str(v.get("stage") or "")
    return VerdictLine(
        stage=f"{stage}/{lane}" if lane else stage,
        attempt=int(v.get("attempt") or 0),
        outcome=str(v.get("outcome") or ""),
        detail=str(v.get("detail") or ""),
    )


def of_repository(views: Iterable[RunView], repository: str) -> list[RunView]:
    """The App's runs of `OWNER/REPO`, matched ignoring case as GitHub does."""
    wanted = repository.lower()
    return [
        v
        for v in views
        if is_app_run(v) and str(v.data["key"].get("repository", "")).lower() == wanted
    ]


def is_app_run(view: RunView) -> bool:
    """A run the App started (local mode's runs carry no repository key)."""
    return "key" in view.data


def list_runs(store: Store, repository: str | None = None) -> list[RunLine]:
    """The App's runs, of one `OWNER/REPO` when given (matched ignoring case,
    as GitHub does), newest first, each with its tasks' links."""
    every = store.projections.runs()
    views = of_repository(every, repository) if repository else list(filter(is_app_run, every))
    views.sort(key=lambda v: (v.updated_at, v.run_id), reverse=True)
    return [run_line(v, store.projections.tasks(v.run_id)) for v in views]


def run_detail(store: Store, run_id: str) -> RunLine | None:
    view = store.projections.run(run_id)
    if view is None or not is_app_run(view):
        return None
    return run_line(view, store.projections.tasks(run_id))
