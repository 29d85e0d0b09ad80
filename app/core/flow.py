"""The task flow as plain functions over a decision context.

enter a stage, dispatch an attempt, advance, fail, stop the run, park and
release dependents. Each function emits the events that say what happened and
asks for effects; none reads anything but the context's state. What people are
told about it is rendered from the state (`run_view.py`), not asked for here.
"""

from __future__ import annotations

from typing import Literal

from app.core import events as ev
from app.core.assessment import SalvageResult
from app.core.context import Context
from app.core.dependents import Unit, doomed
from app.core.effects import DispatchStage
from app.core.judging import FaultKind
from app.core.keys import attempt_key
from app.core.notices import prompt_extras
from app.core.outstanding import assess_effect, integrate_effect, salvage_effect
from app.core.pipeline import FORWARD, TERMINAL_FAILURES, spec
from app.core.recovery import after_failure, salvage_decision
from app.core.state import RunState, StopKind, TaskState

FailKind = Literal["failure", "infra", "auth"]
# A stronger stop replaces a weaker one, never the reverse.
STOP_RANK: dict[StopKind, int] = {
    "failure": 1,
    "provider": 2,
    "infra": 2,
    "operator": 3,
    "auth": 4,
}


def suspended(c: Context, t: TaskState, stage: str, when: str) -> bool:
    """A hard stop suspends the task where it stands instead of starting work."""
    stop = c.s.stop
    if stop is None or not stop.hard:
        return False
    c.emit(
        ev.TaskSuspended(
            at=c.at, task=t.id, stage=stage, detail=f"run stopped {when}: {stop.reason}"
        )
    )
    return True


def enter(
    c: Context, t: TaskState, stage: str, *, previous: str | None, forward: bool = True
) -> None:
    if suspended(c, t, stage, f"before {stage}"):
        return
    c.emit(ev.StageEntered(at=c.at, task=t.id, stage=stage, previous=previous, forward=forward))
    if stage == "integrate":
        integrate(c, t)
        return
    for lane in spec(stage).lanes:
        dispatch(c, t, stage, lane)


def dispatch(c: Context, t: TaskState, stage: str, lane: str) -> None:
    if suspended(c, t, stage, f"before retrying {stage}"):
        return
    token = c.token()
    number = t.attempts.get(stage, 0) + 1
    fresh = t.fresh if spec(stage).writes else None  # the dispatch below clears it
    c.emit(
        ev.StageDispatched(at=c.at, task=t.id, stage=stage, attempt=number, lane=lane, token=token)
    )
    c.effect(
        DispatchStage(
            key=attempt_key(c.run_id, t.id, stage, number, lane),
            task=t.id,
            unit=t.unit,
            stage=stage,
            attempt=number,
            lane=lane,
            token=token,
            branch=t.branch,
            base=c.s.base,
            writes=spec(stage).writes,
            subtasks=list(t.subtasks),
            deadline_seconds=c.s.config.deadline(stage),
            extras=prompt_extras(c.s, t),
            fresh=fresh,
        )
    )


def integrate(c: Context, t: TaskState) -> None:
    if not c.s.config.auto_merge:
        c.emit(
            ev.TaskManualMergeReady(
                at=c.at,
                task=t.id,
                detail="review passed; autoMerge is off: merge the branch by hand "
                "or record it with `complete`",
            )
        )
        return
    c.emit(ev.IntegrationRequested(at=c.at, task=t.id))
    c.effect(integrate_effect(c.s, t))


def advance(c: Context, t: TaskState, stage: str) -> None:
    """A stage passed: back to a ticket's origin, forward, or landed after integrate."""
    if t.ticket is not None and stage == t.ticket.route:
        origin = t.ticket.origin
        c.emit(ev.TicketClosed(at=c.at, task=t.id, ticket=t.ticket.number, origin=origin))
        enter(c, t, origin, previous=stage)
        return
    if stage == "integrate":
        c.emit(ev.TaskLanded(at=c.at, task=t.id, sha=None))
        return
    enter(c, t, FORWARD[stage], previous=stage)


def record_fault(
    c: Context, t: TaskState, stage: str, kind: FaultKind, detail: str, *, retried: bool
) -> None:
    c.emit(
        ev.FaultRecorded(at=c.at, task=t.id, stage=stage, kind=kind, detail=detail, retried=retried)
    )


def fail(c: Context, t: TaskState, stage: str, detail: str, *, kind: FailKind = "failure") -> None:
    """Keep the branch, park dependents, stop fan-out; assess product failures."""
    status: Literal["failed", "infra-fault"] = "infra-fault" if kind == "infra" else "failed"
    c.emit(ev.TaskFailed(at=c.at, task=t.id, stage=stage, status=status, detail=detail))
    park(c)
    if kind == "auth":
        stop(
            c,
            kind,
            f"task {t.id} auth failure at {stage}: {detail}; fix the "
            "credentials, then resume (nothing is dispatched until then)",
        )
    else:
        stop(c, kind, f"task {t.id} {status} at {stage}: {detail}")
    cfg = c.s.config
    follow = after_failure(
        status,
        stage,
        fault=None if kind == "failure" else kind,
        assess_enabled=cfg.assess_partial_branches,
        dry_run=cfg.dry_run,
        branch_exists=t.branch_started,
    )
    if follow == "assess":
        c.emit(ev.AssessmentRequested(at=c.at, task=t.id))
        c.effect(assess_effect(c.s, t))
    elif follow == "salvage":
        salvage(c, t, "infra-fault")


def salvage(c: Context, t: TaskState, classification: str) -> None:
    """Commit the ExecPlan artefacts of a failed branch, when the table says so."""
    run, reason = salvage_decision(
        classification,
        assess_enabled=c.s.config.assess_partial_branches,
        evidence_error=t.assessment is not None and t.assessment.evidence_error is not None,
        has_branch=t.branch_started,
    )
    if not run:
        skipped = SalvageResult(classification=classification, skipped=True, detail=reason)
        c.emit(ev.SalvageRecorded(at=c.at, task=t.id, salvage=skipped))
        return
    c.emit(ev.SalvageRequested(at=c.at, task=t.id, classification=classification))
    c.effect(salvage_effect(c.s, t, classification))


def stop(c: Context, kind: StopKind, reason: str) -> None:
    current = c.s.stop
    if current is not None and STOP_RANK[current.kind] >= STOP_RANK[kind]:
        return
    c.emit(ev.RunStopped(at=c.at, kind=kind, reason=reason))


def park(c: Context) -> None:
    """Park every waiting task downstream of a failure."""
    for task_id, root in downstream_of_failures(c.s).items():
        t = c.s.task(task_id)
        if t.status == "pending" and t.resume_at is None:
            c.emit(ev.TaskParked(at=c.at, task=task_id, because=root))


def release(c: Context) -> None:
    """Unpark tasks no longer downstream of a failure; lift a stop nobody needs."""
    still = downstream_of_failures(c.s)
    for t in list(c.s.tasks.values()):
        if t.status == "blocked" and t.id not in still:
            c.emit(ev.TaskReleased(at=c.at, task=t.id))
    current = c.s.stop
    left = [t for t in c.s.tasks.values() if t.status in TERMINAL_FAILURES | {"deferred"}]
    if current is not None and not current.hard and not left:
        c.emit(ev.StopLifted(at=c.at, reason="no failed or deferred task remains"))


def downstream_of_failures(s: RunState) -> dict[str, str]:
    """Waiting tasks the roadmap's dependencies put behind a failed one, with that root."""
    assert s.roadmap is not None
    units = {t.id: Unit(t.id, t.subtasks, t.requires) for t in s.tasks.values()}
    failed = [units[t.id] for t in s.tasks.values() if t.status in TERMINAL_FAILURES]
    waiting = [units[t.id] for t in s.tasks.values() if t.status in ("pending", "blocked")]
    return dict(doomed(s.roadmap, failed, waiting))


def remediation_for(s: RunState, failed: list[str]) -> Literal["flushed", "suppressed", "none"]:
    """Failed tasks get remediation, unless a fault explains them or it is a dry run."""
    m = s.metrics
    if failed and (m.provider_faults or m.infra_faults or m.auth_faults):
        return "suppressed"
    if failed and not s.config.dry_run:
        return "flushed"
    return "none"
