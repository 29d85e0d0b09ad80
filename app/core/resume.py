"""Fresh-launch recovery in the decider: discover, assess, resume or report, account.

Survivors are held out of selection for the whole run. With
`resumePartialBranches` on, each candidate goes through the mode's table
(`assess` reports, `review` may re-enter dual review, `continue` dispatches
from the committed ExecPlan's status); a resumed candidate that lands is
resolved. Every survivor still unresolved at the end halts the run with
`needs-operator-recovery`, so a blocked frontier never reads as finished.
"""

from __future__ import annotations

from app.core import events as ev
from app.core.assessment import Assessment
from app.core.context import Context
from app.core.discovery import SurvivorEvidence, branch_evidence, discover
from app.core.flow import enter, stop
from app.core.inputs import StartRun
from app.core.notices import halt_reason
from app.core.outstanding import survivor_assess_effect
from app.core.preflight import Preflight
from app.core.recovery import ResumeAction, continue_mode, review_mode, review_preview
from app.core.recovery_report import unresolved
from app.core.state import RunState, TaskState


def block_for_preflight(c: Context, preflight: Preflight) -> None:
    """Credentials that cannot do what the run needs: recovery is blocked and
    the run halts (`auth`, a hard stop) before anything is dispatched."""
    cfg = c.s.config
    c.emit(
        ev.RecoveryPlanned(
            at=c.at,
            candidates=[],
            skipped=[],
            held=[],
            enabled=cfg.resume_partial_branches,
            mode=cfg.resume_mode,
            blocked=preflight.blocked(),
        )
    )
    stop(c, "auth", preflight.halt())


def plan_recovery(c: Context, inp: StartRun) -> None:
    s = c.s
    if not inp.survivors or s.roadmap is None or not s.roadmap.valid:
        return
    cfg = s.config
    found = discover(
        s.roadmap,
        inp.survivors,
        resume_task_id=cfg.resume_task_id,
        max_candidates=cfg.resume_max_candidates,
    )
    c.emit(
        ev.RecoveryPlanned(
            at=c.at,
            candidates=[{"id": f.id, "branch": f.branch} for f in found.candidates],
            skipped=[k.to_json() for k in found.skipped],
            held=list(found.held),
            enabled=cfg.resume_partial_branches,
            mode=cfg.resume_mode,
        )
    )
    if not cfg.resume_partial_branches:
        return
    for f in found.candidates:
        consider(c, s.task(f.id), f.branch)


def consider(c: Context, t: TaskState, branch: str) -> None:
    cfg = c.s.config
    evidence = branch_evidence(branch, evidence_for(c.s, branch))
    if cfg.resume_mode == "continue":
        decided(c, t, branch, continue_mode(evidence, dry_run=cfg.dry_run))
    elif cfg.dry_run and cfg.resume_mode == "review":
        decided(c, t, branch, review_preview(evidence))
    elif cfg.dry_run:
        decided(c, t, branch, ResumeAction("report", "not-assessed", "dry-run"))
    else:
        c.emit(ev.RecoveryAssessRequested(at=c.at, task=t.id, branch=branch))
        c.effect(survivor_assess_effect(c.s, t))


def assessed(c: Context, t: TaskState, assessment: Assessment) -> None:
    """The assessment of a survivor came back: apply the mode's table."""
    c.emit(ev.RecoveryAssessed(at=c.at, task=t.id, assessment=assessment))
    branch = c.s.recovery.held.get(t.id) or t.branch
    cfg = c.s.config
    if cfg.resume_mode != "review":
        decided(c, t, branch, ResumeAction("report", assessment.classification))
        return
    e = branch_evidence(branch, evidence_for(c.s, branch), assessment)
    decided(
        c,
        t,
        branch,
        review_mode(assessment.classification, e, review_mode_on=True, dry_run=cfg.dry_run),
    )


def decided(c: Context, t: TaskState, branch: str, a: ResumeAction) -> None:
    c.emit(
        ev.RecoveryDecided(
            at=c.at,
            task=t.id,
            branch=branch,
            classification=a.classification,
            action=a.action,
            reason=a.reason,
            stage=a.stage,
        )
    )


def start_resumes(c: Context, room: int) -> int:
    """Start queued resumes first; returns the room left for normal selection."""
    for task_id in list(c.s.recovery.queue):
        if room <= 0:
            break
        decision = c.s.recovery.decisions[task_id]
        assert decision.stage is not None
        t = c.s.task(task_id)
        c.emit(ev.RecoveryResumed(at=c.at, task=t.id, stage=decision.stage))
        enter(c, t, decision.stage, previous=None)
        room -= 1
    return room


def finish(c: Context) -> None:
    """At the end of the run: record the survivors still unresolved, and the halt."""
    rows = unresolved(c.s)
    if rows:
        c.emit(ev.RecoveryUnresolved(at=c.at, unresolved=rows, reason=halt_reason(rows)))


def evidence_for(s: RunState, branch: str) -> SurvivorEvidence:
    survivor = s.recovery.survivors.get(branch)
    return survivor.evidence if survivor is not None else SurvivorEvidence()
