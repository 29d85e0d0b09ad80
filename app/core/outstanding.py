"""Effects the state is waiting on, rebuilt from state alone.

The flow uses these constructors when it first asks, and a resuming driver uses
`outstanding` to ask again after a crash: same data, same idempotency key.
"""

from __future__ import annotations

from app.core.effects import Assess, Effect, Integrate, JudgeGate, Salvage
from app.core.keys import assess_key, integrate_key, judge_key, salvage_key, survivor_assess_key
from app.core.state import RunState, TaskState

# The `stage` an Assess effect names for a branch that survived an earlier run.
SURVIVOR_ASSESS_STAGE = "recovery"


def integrate_effect(s: RunState, t: TaskState) -> Integrate:
    return Integrate(
        key=integrate_key(s.run_id, t.id, t.attempts.get("integrate", 1)),
        task=t.id,
        branch=t.branch,
        base=s.base,
        ticks=list(t.subtasks) if t.unit == "addendum" else [t.id],
    )


def assess_effect(s: RunState, t: TaskState) -> Assess:
    return Assess(
        key=assess_key(s.run_id, t.id, sum(t.attempts.values())),
        task=t.id,
        branch=t.branch,
        base=s.base,
        stage=t.stage or "plan",
        detail=t.detail,
    )


def survivor_assess_effect(s: RunState, t: TaskState) -> Assess:
    return Assess(
        key=survivor_assess_key(s.run_id, t.id),
        task=t.id,
        branch=s.recovery.held.get(t.id) or t.branch,
        base=s.base,
        stage=SURVIVOR_ASSESS_STAGE,
        detail="surviving branch of an earlier run, found at launch",
    )


def salvage_effect(s: RunState, t: TaskState, classification: str) -> Salvage:
    return Salvage(
        key=salvage_key(s.run_id, t.id, sum(t.attempts.values())),
        task=t.id,
        branch=t.branch,
        classification=classification,
    )


def judge_effect(s: RunState, t: TaskState, stage: str, gate: str, reason: str) -> JudgeGate:
    return JudgeGate(
        key=judge_key(s.run_id, t.id, stage, gate, t.ledger(stage, gate).charges),
        task=t.id,
        stage=stage,
        gate=gate,
        reason=reason,
    )


def outstanding(s: RunState) -> list[Effect]:
    """Integrate, assess, salvage and judge requests recorded but not answered."""
    out: list[Effect] = []
    for t in s.tasks.values():
        if t.awaiting == "integrate":
            out.append(integrate_effect(s, t))
        elif t.awaiting == "assess":
            out.append(assess_effect(s, t))
        elif t.awaiting == "salvage":
            cls = t.assessment.classification if t.assessment is not None else "infra-fault"
            out.append(salvage_effect(s, t, cls))
        elif t.awaiting == "survivor-assess":
            out.append(survivor_assess_effect(s, t))
        elif t.awaiting == "judge" and t.stage is not None:
            out.append(judge_effect(s, t, t.stage, "review", t.feedback))
    return out
