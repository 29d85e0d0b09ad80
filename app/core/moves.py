"""Operator moves: retry, rearm, complete, force-start, halt, resume.

Each accepted move is an event naming who asked and why; a move that does not
fit the task's state is recorded as rejected with the reason, never applied
halfway. Re-arm overrides are checked by the config model's own rules.
"""

from __future__ import annotations

from app.core import events as ev
from app.core.config import ConfigError, load_overrides
from app.core.context import Context
from app.core.flow import advance, enter, release
from app.core.inputs import OperatorMove
from app.core.judging import manual_checks

RESTARTABLE = frozenset({"failed", "infra-fault", "deferred", "manual-merge-ready"})
REARMABLE = RESTARTABLE | {"pending", "blocked"}


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
    elif m.move == "rearm":
        c.emit(
            ev.TaskRearmed(
                at=c.at, task=t.id, by=m.by, reason=m.reason, overrides=dict(m.overrides)
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
    if m.move == "rearm":
        if t.status not in REARMABLE:
            return f"task {t.id} is {t.status}; it cannot be re-armed now"
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
