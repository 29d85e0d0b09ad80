"""What a person is shown about a run and each of its tasks: one model, two renderers.

The App renders these views as check runs and status comments on GitHub
(`app/apphost/views.py`); local mode prints them in the terminal
(`app/local/view_text.py`). Every sentence a person reads about a run's
progress is made here, from the state alone, so both hosts say the same thing.
Text that came from outside ODW (roadmap titles, details, verdict reasons) is
carried as it is: each renderer makes it safe for its medium.
"""

from __future__ import annotations

from dataclasses import dataclass

from app.core.notices import REMEDIATION_SUPPRESSED, failure_notice, remediation_notice
from app.core.offers import NextMove, next_moves
from app.core.pipeline import spec
from app.core.result import run_result
from app.core.sanitize import truncate
from app.core.state import RunState, TaskState

FAILED = frozenset({"failed", "infra-fault"})
STOPPED = FAILED | {"deferred"}
HEAD_DETAIL = 80  # characters of a stopped task's detail in its one-line head


@dataclass(frozen=True)
class Judged:
    """A task's last judged attempt: what its stage (and lane) concluded, and why."""

    stage: str
    lane: str
    attempt: int
    outcome: str
    detail: str

    @property
    def name(self) -> str:
        return f"{self.stage}/{self.lane}" if self.lane else self.stage

    @property
    def ok(self) -> bool:
        """Passed, or a finished review that asks for changes; anything else failed."""
        return self.outcome in ("passed", "changes")


@dataclass(frozen=True)
class StageRow:
    stage: str
    attempts: int
    current: bool


@dataclass(frozen=True)
class TaskView:
    id: str
    title: str  # the roadmap's headline (the id when the roadmap has none)
    status: str
    stage: str | None
    branch: str
    detail: str
    head: str  # one line: what the task does now, or how it ended
    conclusion: str | None  # a check run's conclusion; None while it runs
    stages: tuple[StageRow, ...]  # attempts counted in the current retry cycle
    retries: int  # operator restarts so far (retry, recover, rearm)
    last: Judged | None
    failure: str | None  # what failed and what is kept, once the task failed
    moves: tuple[NextMove, ...]
    landed_sha: str | None


def task_view(s: RunState, t: TaskState) -> TaskView:
    task = s.roadmap.get(t.id) if s.roadmap is not None else None
    return TaskView(
        id=t.id,
        title=task.headline if task is not None else t.id,
        status=t.status,
        stage=t.stage,
        branch=t.branch,
        detail=t.detail,
        head=_head(t),
        conclusion=task_conclusion(t.status),
        stages=tuple(
            StageRow(stage, n, stage == t.stage and t.status == "running")
            for stage, n in t.cycle_attempts().items()
        ),
        retries=t.retries,
        last=_judged(t),
        failure=failure_notice(t) if t.status in FAILED else None,
        moves=next_moves(s, t),
        landed_sha=t.landed_sha,
    )


def _head(t: TaskState) -> str:
    if t.status == "landed":
        return f"landed as {(t.landed_sha or '')[:12]}"
    if t.status == "running":
        retry = f", retry {t.retries}" if t.retries else ""
        lanes = len(spec(t.stage).lanes) if t.stage else 1
        if lanes > 1:  # each lane is an attempt of its own: say the round, not "attempt 2"
            return f"running {t.stage} ({lanes} lanes, round {max(t.review_rounds, 1)}{retry})"
        return f"running {t.stage} (attempt {t.cycle_attempt(t.stage or '')}{retry})"
    return f"{t.status} at {t.stage or '-'}: {truncate(t.detail, HEAD_DETAIL)}"


def _judged(t: TaskState) -> Judged | None:
    v = t.verdict
    if v is None:
        return None
    return Judged(
        stage=str(v["stage"]),
        lane=str(v.get("lane") or ""),
        attempt=int(v["attempt"]),
        outcome=str(v["outcome"]),
        detail=str(v["detail"]),
    )


def task_conclusion(status: str) -> str | None:
    if status == "landed":
        return "success"
    if status in FAILED:
        return "failure"
    if status in ("deferred", "manual-merge-ready"):
        return "action_required"
    if status == "blocked":
        return "neutral"
    return None


@dataclass(frozen=True)
class TaskRow:
    """One task on the run's front page: where it is, and why it waits or stopped."""

    id: str
    status: str
    why: str  # "running implement", "parked: depends on 1.1, which did not land", ...
    moves: tuple[NextMove, ...]


@dataclass(frozen=True)
class MoveRow:
    what: str
    by: str
    refused: str


@dataclass(frozen=True)
class RunView:
    run_id: str
    base: str
    title: str  # one line: how many landed, failed, run; halted; a dry run's frontier
    conclusion: str | None  # the run check's; None while work goes on
    rows: tuple[TaskRow, ...]
    failed: tuple[str, ...]
    halted: str | None
    resume: bool  # an operator's halt: `/odw resume` undoes it
    would_start: tuple[str, ...] | None  # a dry run's ready tasks; None: not a dry run
    max_parallel: int
    fault_metrics: tuple[tuple[str, int], ...]
    moves: tuple[MoveRow, ...]  # the last operator moves
    remediate: tuple[str, ...]  # failed tasks left for remediation when the run ended
    remediation: str | None  # what the run's end decided about remediation, said


def run_view(s: RunState) -> RunView:
    result = run_result(s)
    rows = tuple(_task_row(s, r) for r in result["results"])
    landed = sum(1 for r in rows if r.status == "landed")
    failed = tuple(r.id for r in rows if r.status in FAILED)
    running = sum(1 for r in rows if r.status == "running")
    halted: str | None = result.get("halted")
    parts = [f"{landed} of {len(rows)} landed"]
    if failed:
        parts.append(f"{len(failed)} failed ({', '.join(failed[:3])})")
    if running:
        parts.append(f"{running} running")
    if s.ended:
        conclusion: str | None = "failure" if halted or failed else "success"
    elif s.stop is not None and not running:
        conclusion = "action_required"
    else:
        conclusion = None
    if halted:
        parts.append("halted")
    would = _would_start(s)
    if would is not None:
        parts.insert(0, f"dry run: would start {', '.join(would[:10]) or 'nothing'}")
    remediate = (
        tuple(t.id for t in s.tasks.values() if t.status == "failed")
        if s.remediation == "flushed"
        else ()
    )
    return RunView(
        run_id=s.run_id,
        base=s.base,
        title=" · ".join(parts),
        conclusion=conclusion,
        rows=rows,
        failed=failed,
        halted=halted,
        resume=s.stop is not None and s.stop.kind == "operator" and not s.ended,
        would_start=would,
        max_parallel=s.config.max_parallel,
        fault_metrics=tuple(sorted(result["faultMetrics"].items())),
        moves=tuple(_move_row(m) for m in s.moves[-10:]),
        remediate=remediate,
        remediation=remediation_notice(remediate)
        if remediate
        else (REMEDIATION_SUPPRESSED if s.remediation == "suppressed" else None),
    )


def _task_row(s: RunState, r: dict[str, object]) -> TaskRow:
    t = s.tasks.get(str(r["id"]))
    status, detail = str(r["status"]), str(r.get("detail") or "")
    if t is not None and status in STOPPED:  # the front page has room for the cause
        why = f"{t.status} at {t.stage or '-'}: {truncate(t.detail, HEAD_DETAIL * 3)}"
    elif t is not None and status in ("running", "landed"):
        why = _head(t)
    else:
        why = truncate(detail, HEAD_DETAIL * 2) if detail else ""
    moves = next_moves(s, t) if t is not None and not s.ended else ()
    return TaskRow(str(r["id"]), status, why, moves)


def _would_start(s: RunState) -> tuple[str, ...] | None:
    """A dry run's frontier: the ready tasks a real run would start (None: not a dry run)."""
    if not s.config.dry_run:
        return None
    return tuple(s.ready()) if s.roadmap is not None else ()


def _move_row(m: dict[str, object]) -> MoveRow:
    what = f"{m.get('move')} {m.get('task') or ''}".strip()
    refused = m.get("rejected")
    return MoveRow(what, str(m.get("by") or ""), f"refused: {refused}" if refused else "")
