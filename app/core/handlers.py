"""One handler per input type, and the table `decide` dispatches through.

Each handler reads its input against the context's state, emits what happened,
asks for effects, and (except at the end of a run) lets `fill` continue
suspended work and start ready tasks.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from app.core import events as ev
from app.core.context import Context
from app.core.flow import enter, fail, record_fault, release, remediation_for, salvage, stop
from app.core.inputs import (
    AssessmentFinished,
    EndRun,
    GateJudged,
    IntegrationFinished,
    OperatorMove,
    PullClosed,
    SalvageFinished,
    StageFinished,
    StartRun,
)
from app.core.integration import halt_detail
from app.core.judging import judge
from app.core.moves import apply_move
from app.core.outcomes import follow_judgement, open_ticket, remedy
from app.core.pipeline import FIRST_STAGE
from app.core.resume import (
    assessed,
    block_for_preflight,
    finish,
    plan_recovery,
    start_resumes,
)

Handler = Callable[[Context, Any], None]


def fill(c: Context) -> None:
    """Continue suspended work, then start ready tasks up to maxParallel."""
    s = c.s
    if s.stop is not None and s.stop.hard:
        return
    for t in list(s.tasks.values()):
        if t.status == "pending" and t.resume_at is not None:
            enter(c, t, t.resume_at, previous=None)
    if s.stop is not None or s.config.dry_run:
        return
    room = start_resumes(c, s.config.max_parallel - len(s.running()))
    for task_id in s.ready():
        if room <= 0:
            break
        t = s.task(task_id)
        if t.status != "pending":
            continue
        c.emit(ev.TaskStarted(at=c.at, task=t.id))
        enter(c, t, FIRST_STAGE, previous=None)
        room -= 1


def on_start(c: Context, inp: StartRun) -> None:
    c.emit(
        ev.RunStarted(
            at=c.at,
            run_id=inp.run_id,
            base=inp.base,
            roadmap=inp.roadmap,
            config=inp.config,
            held=inp.held,
            survivors=inp.survivors,
        )
    )
    assert c.s.roadmap is not None
    if inp.preflight is not None and not inp.preflight.ok:
        block_for_preflight(c, inp.preflight)
    elif not c.s.roadmap.valid:
        problems = "; ".join(p.message for p in c.s.roadmap.errors)
        stop(c, "failure", f"roadmap has errors, nothing is scheduled: {problems}")
    else:
        plan_recovery(c, inp)
    fill(c)


def on_stage_finished(c: Context, inp: StageFinished) -> None:
    t = c.s.tasks.get(inp.task)
    if t is None:
        fill(c)
        return
    attempt = next((a for a in t.live.values() if a.token == inp.token), None)
    if attempt is None or attempt.stage != inp.stage:
        c.emit(
            ev.StaleVerdictIgnored(
                at=c.at,
                task=t.id,
                stage=inp.stage,
                token=inp.token,
                detail="no live attempt holds this token; the verdict is ignored",
            )
        )
        fill(c)
        return
    j = judge(attempt.stage, attempt.token, inp.verdict, inp.fault)
    c.emit(
        ev.AttemptJudged(
            at=c.at,
            task=t.id,
            stage=attempt.stage,
            attempt=attempt.number,
            lane=attempt.lane,
            token=attempt.token,
            outcome=j.outcome,
            detail=j.detail,
            gate=j.gate,
            checks=list(j.checks),
            verdict=inp.verdict,
        )
    )
    follow_judgement(c, t, attempt.stage, attempt.lane, j)
    fill(c)


def on_integration_finished(c: Context, inp: IntegrationFinished) -> None:
    t = c.s.tasks.get(inp.task)
    if t is not None and t.awaiting == "integrate":
        c.emit(ev.IntegrationRecorded(at=c.at, task=t.id, report=inp.report, fault=inp.fault))
        if inp.report is None or inp.fault is not None:
            why = inp.fault or "no report"
            record_fault(c, t, "integrate", "infra", why, retried=False)
            fail(
                c,
                t,
                "integrate",
                f"integration faulted ({why}); never retried because a hidden first attempt "
                f"may already have pushed: inspect origin/{c.s.base} and the roadmap before "
                "relaunching",
                kind="infra",
            )
        elif (detail := halt_detail(inp.report)) is None:
            c.emit(ev.TaskLanded(at=c.at, task=t.id, sha=inp.report.sha))
        else:
            fail(c, t, "integrate", detail)
    fill(c)


def on_assessment_finished(c: Context, inp: AssessmentFinished) -> None:
    t = c.s.tasks.get(inp.task)
    if t is not None and t.awaiting == "survivor-assess":
        assessed(c, t, inp.assessment)
    elif t is not None and t.awaiting == "assess":
        c.emit(ev.AssessmentRecorded(at=c.at, task=t.id, assessment=inp.assessment))
        salvage(c, t, inp.assessment.classification)
    fill(c)


def on_salvage_finished(c: Context, inp: SalvageFinished) -> None:
    t = c.s.tasks.get(inp.task)
    if t is not None and t.awaiting == "salvage":
        c.emit(ev.SalvageRecorded(at=c.at, task=t.id, salvage=inp.salvage))
    fill(c)


def on_gate_judged(c: Context, inp: GateJudged) -> None:
    t = c.s.tasks.get(inp.task)
    if t is not None and t.awaiting == "judge":
        c.emit(
            ev.GateJudgeDecided(
                at=c.at,
                task=t.id,
                stage=inp.stage,
                gate=inp.gate,
                decision=inp.decision,
                by=inp.by,
            )
        )
        if inp.decision == "continue":
            remedy(c, t, inp.stage)
        elif inp.decision == "recover":
            open_ticket(c, t, inp.stage, inp.gate, t.feedback or "review findings")
        else:
            fail(c, t, inp.stage, f"the {inp.gate} gate judge decided FAIL: {t.feedback}")
    fill(c)


def on_operator_move(c: Context, inp: OperatorMove) -> None:
    apply_move(c, inp)
    fill(c)


def on_pull_closed(c: Context, inp: PullClosed) -> None:
    """A person's merge lands the task (its dependents may go on); a close stops it."""
    t = c.s.tasks.get(inp.task)
    if t is not None and t.status != "landed":
        if inp.merged:
            c.emit(
                ev.TaskMergedByPerson(at=c.at, task=t.id, number=inp.number, sha=inp.sha, by=inp.by)
            )
            release(c)
        elif t.status not in ("failed", "infra-fault"):
            fail(
                c,
                t,
                t.stage or "plan",
                f"pull request #{inp.number} was closed unmerged by {inp.by}",
            )
    fill(c)


def on_end(c: Context, inp: EndRun) -> None:
    """Decide remediation for failed tasks (unless a fault explains them), then end."""
    failed = [t.id for t in c.s.tasks.values() if t.status == "failed"]
    remediation = remediation_for(c.s, failed)
    finish(c)
    c.emit(ev.RunEnded(at=c.at, remediation=remediation))


HANDLERS: dict[type, Handler] = {
    StartRun: on_start,
    StageFinished: on_stage_finished,
    IntegrationFinished: on_integration_finished,
    AssessmentFinished: on_assessment_finished,
    SalvageFinished: on_salvage_finished,
    GateJudged: on_gate_judged,
    OperatorMove: on_operator_move,
    PullClosed: on_pull_closed,
    EndRun: on_end,
}
