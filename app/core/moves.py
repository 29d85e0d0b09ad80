"""Operator moves: retry, rearm, complete, force-start, halt, resume.

Each accepted move is an event naming who asked and why; a move that does not
fit the task's state is recorded as rejected with the reason, never applied
halfway.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from app.core import events as ev
from app.core.inputs import OperatorMove
from app.core.judging import manual_checks

if TYPE_CHECKING:
    from app.core.decide import Decider

REARM_FIELDS = frozenset(
    {"instructions", "agent", "model", "stageAttempts", "gateRetryBudget", "routeBudget"}
)
RESTARTABLE = frozenset({"failed", "infra-fault", "deferred", "manual-merge-ready"})
REARMABLE = RESTARTABLE | {"pending", "blocked"}


def apply_move(d: Decider, m: OperatorMove) -> None:
    why = _refusal(d, m)
    if why is not None:
        d.emit(
            ev.MoveRejected(at=d.at, move=m.move, task=m.task, by=m.by, reason=m.reason, why=why)
        )
        return
    if m.move == "halt":
        d.emit(ev.RunHalted(at=d.at, by=m.by, reason=m.reason))
        return
    if m.move == "resume":
        d.emit(ev.RunResumed(at=d.at, by=m.by, reason=m.reason))
        d.release()
        return
    assert m.task is not None
    t = d.s.task(m.task)
    if m.move == "retry":
        d.emit(ev.TaskRetried(at=d.at, task=t.id, by=m.by, reason=m.reason))
        d.release()
    elif m.move == "rearm":
        d.emit(
            ev.TaskRearmed(
                at=d.at, task=t.id, by=m.by, reason=m.reason, overrides=dict(m.overrides)
            )
        )
        d.release()
    elif m.move == "complete":
        stage = t.stage
        assert stage is not None
        d.emit(
            ev.StageCompletedManually(
                at=d.at,
                task=t.id,
                stage=stage,
                by=m.by,
                reason=m.reason,
                checks=list(manual_checks(m.by, m.reason or "no reason given")),
            )
        )
        d.release()
        d.advance(t, stage)
    elif m.move == "force-start":
        d.emit(ev.TaskForceStarted(at=d.at, task=t.id, by=m.by, reason=m.reason))
        d.emit(ev.TaskStarted(at=d.at, task=t.id, forced=True))
        d.enter(t, "plan", previous=None)


def _refusal(d: Decider, m: OperatorMove) -> str | None:
    s = d.s
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
        return _bad_overrides(m.overrides)
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


def _bad_overrides(overrides: dict[str, Any]) -> str | None:
    unknown = sorted(set(overrides) - REARM_FIELDS)
    if unknown:
        return f"rearm cannot change {unknown[0]!r}; it can change " + ", ".join(
            sorted(REARM_FIELDS)
        )
    for name, least in (("stageAttempts", 1), ("routeBudget", 0)):
        value = overrides.get(name)
        if value is not None and (
            not isinstance(value, int) or isinstance(value, bool) or value < least
        ):
            return f"rearm {name} must be an integer of at least {least}"
    budget = overrides.get("gateRetryBudget")
    if budget is not None and not _budget_ok(budget):
        return "rearm gateRetryBudget must be a non-negative integer or a mapping of gate to one"
    for name in ("instructions", "agent", "model"):
        if name in overrides and not isinstance(overrides[name], str):
            return f"rearm {name} must be text"
    return None


def _budget_ok(value: object) -> bool:
    def ok(v: object) -> bool:
        return isinstance(v, int) and not isinstance(v, bool) and v >= 0

    if isinstance(value, dict):
        return all(ok(v) for v in value.values())
    return ok(value)
