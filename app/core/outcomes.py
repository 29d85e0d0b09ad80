"""What a judged attempt leads to: advance, retry in place, a ticket, or failure.

Infra faults retry up to `stageAttempts`; a gate the stage can change retries
within its budget (charged only on a repeated failure); a gate it cannot change
opens a ticket routed to a stage that can; review changes loop through fix
within the round limits; an exhausted review gate asks the gate judge.
"""

from __future__ import annotations

from app.core import events as ev
from app.core.budgets import charge, fingerprint
from app.core.config import task_gate_budget, task_route_budget, task_stage_attempts
from app.core.context import Context
from app.core.flow import advance, dispatch, enter, fail, record_fault, stop
from app.core.judging import Judgement
from app.core.notices import RESUME_HINT
from app.core.outstanding import judge_effect
from app.core.pipeline import (
    DETERMINISTIC_GATES,
    TICKET_CATEGORIES,
    can_fix_in_place,
    recovery_stage_for,
    spec,
)
from app.core.state import TaskState

# A moving fingerprint is never charged; this absolute backstop still bounds
# in-place attempts of one stage visit so a run cannot loop forever.
ATTEMPT_BACKSTOP = 25


def follow_judgement(c: Context, t: TaskState, stage: str, lane: str, j: Judgement) -> None:
    if j.outcome == "auth":
        record_fault(c, t, stage, "auth", j.detail, retried=False)
        fail(c, t, stage, f"auth failure: {j.detail}", kind="auth")
    elif j.outcome == "provider":
        record_fault(c, t, stage, "provider", j.detail, retried=False)
        c.emit(ev.TaskDeferred(at=c.at, task=t.id, stage=stage, detail=j.detail))
        stop(
            c,
            "provider",
            f"task {t.id} provider fault at {stage}: {j.detail}; deferred and requeued "
            "for the next run (not assessed)",
        )
    elif j.outcome == "infra":
        infra(c, t, stage, lane, j.detail)
    elif j.outcome == "failed":
        fail(c, t, stage, j.detail)
    elif j.outcome == "gate":
        assert j.gate is not None
        gate_failure(c, t, stage, lane, j.gate, j.detail)
    elif spec(stage).lanes != ("",) and (t.live or t.resume_at is not None):
        return  # wait for the other reviewer (or for resume, which re-runs the stage)
    elif j.outcome == "changes" or any(o == "changes" for o, _ in t.lane_results.values()):
        reasons = [d for o, d in t.lane_results.values() if o == "changes"] or [j.detail]
        review_changes(c, t, stage, "; ".join(reasons))
    else:
        advance(c, t, stage)


def infra(c: Context, t: TaskState, stage: str, lane: str, detail: str) -> None:
    if t.infra_faults + 1 < task_stage_attempts(c.s.config, t.overrides):
        record_fault(c, t, stage, "infra", detail, retried=True)
        dispatch(c, t, stage, lane)  # suspends instead while the run is halted
        return
    record_fault(c, t, stage, "infra", detail, retried=False)
    fail(
        c,
        t,
        stage,
        f"infrastructure fault persisted after {t.infra_faults} attempt(s): {detail}; "
        f"branch kept: {RESUME_HINT}",
        kind="infra",
    )


def gate_failure(c: Context, t: TaskState, stage: str, lane: str, gate: str, reason: str) -> None:
    if not can_fix_in_place(stage, gate):
        open_ticket(c, t, stage, gate, reason)
        return
    if t.visit_attempts >= ATTEMPT_BACKSTOP:
        fail(c, t, stage, f"{stage} made {t.visit_attempts} attempts without passing: {reason}")
        return
    if charge_gate(c, t, stage, gate, reason):
        dispatch(c, t, stage, lane)


def charge_gate(c: Context, t: TaskState, stage: str, gate: str, reason: str) -> bool:
    """Charge the gate; True to retry. Exhaustion is handled here."""
    budget = task_gate_budget(c.s.config, t.overrides, gate)
    ledger = t.ledger(stage, gate)
    ch = charge(ledger, fingerprint(reason), budget)
    c.emit(
        ev.GateCharged(
            at=c.at,
            task=t.id,
            stage=stage,
            gate=gate,
            fingerprint=ch.ledger.fingerprint or "",
            charged=ch.charged,
            decision=ch.decision,
            charges=ch.ledger.charges,
            budget=budget,
        )
    )
    if ch.decision == "retry":
        return True
    if gate in DETERMINISTIC_GATES:
        fail(
            c, t, stage, f"{gate} gate budget exhausted ({budget}) on a repeated failure: {reason}"
        )
    elif ledger.reset_used:
        fail(c, t, stage, f"{gate} gate exhausted again after its one reset: {reason}")
    else:
        c.emit(ev.JudgeRequested(at=c.at, task=t.id, stage=stage, gate=gate, reason=reason))
        c.effect(judge_effect(c.s, t, stage, gate, reason))
    return False


def open_ticket(c: Context, t: TaskState, origin: str, gate: str, reason: str) -> None:
    budget = task_route_budget(c.s.config, t.overrides, origin)
    if t.routes.get(origin, 0) >= budget:
        fail(
            c,
            t,
            origin,
            f"route budget exhausted ({budget}) for {gate} failures at {origin}: {reason}",
        )
        return
    category, capability = TICKET_CATEGORIES[gate]
    route = recovery_stage_for(capability)
    c.emit(
        ev.TicketOpened(
            at=c.at,
            task=t.id,
            ticket=t.tickets_opened + 1,
            origin=origin,
            gate=gate,
            category=category,
            capability=capability,
            route=route,
            reason=reason,
        )
    )
    enter(c, t, route, previous=origin, forward=False)


def review_changes(c: Context, t: TaskState, stage: str, reason: str) -> None:
    rounds, limit = (
        (t.design_rounds, c.s.config.max_design_rounds)
        if stage == "design-review"
        else (t.review_rounds, c.s.config.max_review_rounds)
    )
    if rounds >= limit:
        fail(c, t, stage, f"{stage} still requests changes after {rounds} round(s): {reason}")
    elif charge_gate(c, t, stage, "review", reason):
        remedy(c, t, stage)


def remedy(c: Context, t: TaskState, stage: str) -> None:
    """Re-plan after design review, fix after review; a writer retries in place."""
    if stage == "design-review":
        enter(c, t, "plan", previous=stage, forward=False)
    elif stage == "review":
        enter(c, t, "fix", previous=stage, forward=False)
    else:
        dispatch(c, t, stage, "")
