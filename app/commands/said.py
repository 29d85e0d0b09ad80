"""What a reply says a move did: what will run, where, and from which stage.

Read from the events the move's step recorded and the run's state after it, so
the words follow what the core decided, not what was asked. One sentence per
move; task ids, branches and stages are ODW's own names, shown as code. Pure.
"""

from __future__ import annotations

from collections.abc import Sequence

from app.commands.host import Launch
from app.core import events as ev
from app.core.effects import DispatchStage, Effect
from app.core.inputs import OperatorMove
from app.core.recovery import plan_status, stage_for_status
from app.core.state import RunState, TaskState


def move_said(
    op: OperatorMove, events: Sequence[ev.Event], effects: Sequence[Effect], s: RunState
) -> str:
    """The reply's sentence for an accepted move (`events` and `effects` its step's)."""
    if op.move == "halt":
        return (
            f"halted run `{s.run_id}`: nothing new is dispatched and running stages finish; "
            "`/odw resume` undoes it."
        )
    if op.move == "resume":
        started = sorted({e.task for e in events if isinstance(e, ev.StageDispatched)})
        going = f"; dispatched {', '.join(started)}" if started else "; nothing was waiting"
        return f"resumed run `{s.run_id}`{going}."
    assert op.task is not None
    t = s.task(op.task)
    where = _where(events, t)
    if op.move == "retry":
        sent = [f.fresh for f in effects if isinstance(f, DispatchStage) and f.task == t.id]
        fresh = next((f for f in sent if f), None) or t.fresh
        kept = f"; the previous attempts are kept on `{fresh}`" if fresh else ""
        return (
            f"restarting {t.id} from plan on a fresh `{t.branch}` from the tip of "
            f"`{s.base}`{kept} ({where}, retry {t.retries})."
        )
    if op.move == "recover":
        stage = _stage(events, t)
        return (
            f"continuing {t.id} from its kept work on `{t.branch}` at {stage}"
            f"{_because(op, stage)} ({where}, retry {t.retries})."
        )
    if op.move == "rearm":
        given = " ".join(p for k, v in op.overrides.items() for p in _pairs(k, v))
        at = next((e.stage for e in events if isinstance(e, ev.TaskRearmed)), None)
        how = (
            f"continuing from its kept work on `{t.branch}` at {at}{_because(op, at)}"
            if at is not None
            else f"starting again from plan on `{t.branch}`"
        )
        return f"re-armed {t.id} with `{given}`; {how} ({where}, retry {t.retries})."
    if op.move == "complete":
        done = next(e for e in events if isinstance(e, ev.StageCompletedManually))
        nxt = t.stage if t.stage and t.stage != done.stage else "the next stage"
        if t.status == "landed":
            nxt = "landing"
        return f"accepted {done.stage} of {t.id} as passed; going on to {nxt}."
    return f"force-started {t.id} before its dependencies: plan on `{t.branch}` ({where})."


def _where(events: Sequence[ev.Event], t: TaskState) -> str:
    """Dispatched now, or waiting for room in the run."""
    if any(isinstance(e, ev.StageDispatched) and e.task == t.id for e in events):
        return "dispatched now"
    if t.status == "running":
        return "under way"
    return "it starts when the run has room"


def _stage(events: Sequence[ev.Event], t: TaskState) -> str:
    found = next((e.stage for e in events if isinstance(e, ev.TaskRecovered)), None)
    return found or t.stage or "its next stage"


def _because(op: OperatorMove, stage: str | None) -> str:
    """Why that stage: the status line the committed ExecPlan carries, and the
    failed stage when that came first (a stage that failed is never skipped)."""
    if op.evidence is None:
        return ""
    status = plan_status(op.evidence.execplan)
    if status in ("missing", "unknown"):
        return " (no readable ExecPlan Status, so from plan)"
    said = f"its ExecPlan says `Status: {status.upper()}`"
    if stage is not None and stage_for_status(status) != stage:
        said += f", but {stage} is where it failed"
    return f" ({said})"


def _pairs(key: str, value: object) -> list[str]:
    """`gateRetryBudget.build=4` as typed; free text only by its length (it is
    the commenter's own, already quoted above)."""
    if isinstance(value, dict):
        return [f"{key}.{k}={v}" for k, v in value.items()]
    if isinstance(value, str):
        return [f"{key}=({len(value)} characters)"]
    return [f"{key}={value}"]


RESUME_SAID = {
    "continue": "continues {what} from the kept work at the stage each ExecPlan's Status names",
    "review": "assesses {what} and sends an adopt-complete branch with full evidence to review",
    "assess": "assesses {what} and changes nothing",
}


def launch_said(launch: Launch, base: str) -> str:
    """What a command's new run will do, and on which base."""
    if launch.resume_mode:
        what = f"{launch.resume_task}" if launch.resume_task else "every surviving branch"
        does = RESUME_SAID.get(launch.resume_mode, "recovers {what}").format(what=what)
        return f"starting a new run on `{base}` that {does}"
    run = "a dry run (nothing is dispatched or written)" if launch.dry_run else "a run"
    only = f" of task {launch.task} only" if launch.task else ""
    room = f", at most {launch.max_parallel} at a time" if launch.max_parallel else ""
    return f"starting {run}{only} on `{base}`{room}"
