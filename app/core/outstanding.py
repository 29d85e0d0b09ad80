"""Effects the state is waiting on, rebuilt from state alone.

The decider uses these constructors when it first asks, and a resuming driver
uses `outstanding` to ask again after a crash: same data, same idempotency key.
"""

from __future__ import annotations

from app.core.effects import Assess, Effect, Integrate, JudgeGate, Salvage
from app.core.state import RunState, TaskState


def attempt_key(run_id: str, task: str, stage: str, attempt: int, lane: str) -> str:
    return f"{run_id}/{task}/{stage}/{attempt}/{lane or '-'}"


def integrate_effect(s: RunState, t: TaskState) -> Integrate:
    return Integrate(
        key=f"{s.run_id}/{t.id}/integrate/{t.attempts.get('integrate', 1)}",
        task=t.id,
        branch=t.branch,
        base=s.base,
        ticks=list(t.subtasks) if t.unit == "addendum" else [t.id],
    )


def assess_effect(s: RunState, t: TaskState) -> Assess:
    return Assess(
        key=f"{s.run_id}/{t.id}/assess/{sum(t.attempts.values())}",
        task=t.id,
        branch=t.branch,
        base=s.base,
        stage=t.stage or "plan",
        detail=t.detail,
    )


def salvage_effect(s: RunState, t: TaskState, classification: str) -> Salvage:
    return Salvage(
        key=f"{s.run_id}/{t.id}/salvage/{sum(t.attempts.values())}",
        task=t.id,
        branch=t.branch,
        classification=classification,
    )


def judge_effect(s: RunState, t: TaskState, stage: str, gate: str, reason: str) -> JudgeGate:
    charges = t.ledger(stage, gate).charges
    return JudgeGate(
        key=f"{s.run_id}/{t.id}/{stage}/{gate}/judge/{charges}",
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
        elif t.awaiting == "recovery-assess":
            from app.core.resume import recovery_assess_effect

            out.append(recovery_assess_effect(s, t))
        elif t.awaiting == "judge" and t.stage is not None:
            out.append(judge_effect(s, t, t.stage, "review", t.feedback))
    return out
