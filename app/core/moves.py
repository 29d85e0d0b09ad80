"""Operator moves: retry, recover, rearm, complete, force-start, halt, resume.

Each accepted move is an event naming who asked and why; a move that does not
fit the task's state is recorded as rejected with the reason, never applied
halfway. Re-arm overrides are checked by the config model's own rules.
`recover` (and `rearm`, when the host read the kept branch) takes the
fresh-launch recovery's `continue` route for one task inside the open run:
it resumes at the stage the committed ExecPlan's `Status` names.
"""

from __future__ import annotations

from app.core import events as ev
from app.core.config import ConfigError, load_overrides
from app.core.context import Context
from app.core.discovery import branch_evidence
from app.core.flow import advance, enter, release
from app.core.inputs import OperatorMove
from app.core.judging import manual_checks
from app.core.recovery import ResumeAction, continue_mode
from app.core.state import TaskState

RESTARTABLE = frozenset({"failed", "infra-fault", "deferred", "manual-merge-ready"})
REARMABLE = RESTARTABLE | {"pending", "blocked"}
# Why continue mode would not resume a branch, said for the person who asked.
NOT_CONTINUED = {
    "addendum-branch": "an addendum branch is not continued automatically",
    "evidence-collection-error": "its kept branch could not be read",
    "dirty-worktree": "its kept branch could not be confirmed clean",
    "plan-unreadable": "its committed ExecPlan cannot be read",
    "plan-blocked": "its committed ExecPlan says `Status: BLOCKED`",
    "no-committed-work": "its ExecPlan says COMPLETE but the branch has no commits",
}


def apply_move(c: Context, m: OperatorMove) -> None:
    why = refusal(c, m)
    if why is not None:
        c.emit(
            ev.MoveRejected(at=c.at, move=m.move, task=m.task, by=m.by, reason=m.reason, why=why)
        )
        return
    if m.move == "halt":
        c.emit(ev.RunHalted(at=c.at, by=m.by, reason=m.reason))
        return
    if m.move == "resume":
        c.emit(ev.RunResumed(at=c.at, by=m.by, reason=m.reason))
        release(c)
        return
    assert m.task is not None
    t = c.s.task(m.task)
    if m.move == "retry":
        c.emit(ev.TaskRetried(at=c.at, task=t.id, by=m.by, reason=m.reason))
        release(c)
    elif m.move == "recover":
        stage = continued(t, m).stage
        assert stage is not None
        c.emit(ev.TaskRecovered(at=c.at, task=t.id, by=m.by, reason=m.reason, stage=stage))
        release(c)
    elif m.move == "rearm":
        action = continued(t, m) if kept_work(t) and m.evidence is not None else None
        c.emit(
            ev.TaskRearmed(
                at=c.at,
                task=t.id,
                by=m.by,
                reason=m.reason,
                overrides=dict(m.overrides),
                stage=action.stage if action is not None and action.action == "resume" else None,
            )
        )
        release(c)
    elif m.move == "complete":
        stage = t.stage
        assert stage is not None
        c.emit(
            ev.StageCompletedManually(
                at=c.at,
                task=t.id,
                stage=stage,
                by=m.by,
                reason=m.reason,
                checks=list(manual_checks(m.by, m.reason or "no reason given")),
            )
        )
        release(c)
        advance(c, t, stage)
    elif m.move == "force-start":
        c.emit(ev.TaskForceStarted(at=c.at, task=t.id, by=m.by, reason=m.reason))
        c.emit(ev.TaskStarted(at=c.at, task=t.id, forced=True))
        enter(c, t, "plan", previous=None)


def refusal(c: Context, m: OperatorMove) -> str | None:
    """Why a move does not fit the run's state, or None when it does."""
    s = c.s
    if m.move in ("halt", "resume"):
        if m.move == "resume" and s.stop is None:
            return "the run is not stopped"
        return None
    if m.task is None:
        return f"{m.move} needs a task id"
    t = s.tasks.get(m.task)
    if t is None:
        return f"no open task {m.task} in this run"
    if m.move == "retry" and t.status not in RESTARTABLE:
        return (
            f"task {t.id} is {t.status}; only a failed, infra-fault, deferred or "
            "manual-merge-ready task can be retried"
        )
    if m.move == "recover":
        if t.status not in RESTARTABLE:
            return f"task {t.id} is {t.status}; only a stopped task's kept work can be continued"
        if not kept_work(t):
            return f"task {t.id} has no kept branch to continue; `/odw retry {t.id}` starts over"
        action = continued(t, m)
        if action.action != "resume":
            why = NOT_CONTINUED.get(action.reason, action.reason)
            return f"task {t.id} cannot be continued: {why}; `/odw retry {t.id}` starts over"
        return None
    if m.move == "rearm":
        if t.status not in REARMABLE:
            return f"task {t.id} is {t.status}; it cannot be re-armed now"
        if not m.overrides:
            return f"rearm needs an override, e.g. `/odw rearm {t.id} gateRetryBudget.build=4`"
        try:
            load_overrides(m.overrides)
        except ConfigError as exc:
            return str(exc)
        return None
    if m.move == "complete":
        if t.status not in RESTARTABLE or t.stage is None:
            return f"task {t.id} is {t.status}; only a stopped stage can be marked complete"
        return None
    if m.move == "force-start":
        if s.stop is not None and s.stop.hard:
            return "the run is halted; resume it first"
        if t.status not in ("pending", "blocked") or t.resume_at is not None:
            return (
                f"task {t.id} is {t.status}; only a task that has not started can be force-started"
            )
    return None


def kept_work(t: TaskState) -> bool:
    """The task's branch holds work from an earlier attempt (a write stage ran)."""
    return t.branch_started


# Pipeline order, for "not past the stage that failed" (a failed fix counts as implement).
ORDER = {"plan": 0, "design-review": 1, "implement": 2, "gates": 3, "review": 4}


def continued(t: TaskState, m: OperatorMove) -> ResumeAction:
    """Continue mode's answer for the task's kept branch, from the host's evidence
    (none read counts as a collection error: unknown never resumes).

    In a run the task failed at a known stage, which has not passed: the work
    resumes at the ExecPlan's stage but never past that one (a COMPLETE plan
    whose gates failed runs its gates again, not straight to review)."""
    if m.evidence is None:
        return ResumeAction("report", "continue-manual", "evidence-collection-error")
    action = continue_mode(branch_evidence(t.branch, m.evidence), dry_run=False)
    failed_at = "implement" if t.stage == "fix" else t.stage
    if action.stage is None or failed_at not in ORDER:
        return action
    if ORDER[action.stage] > ORDER[failed_at]:
        return ResumeAction(action.action, action.classification, action.reason, failed_at)
    return action
