"""`decide(state, input, tokens) -> (events, effects)`: the only way a run changes.

The decider works on a private copy of the state and applies each event it
emits as it goes, so a multi-step reaction (a stage passes, the next one is
dispatched, a slot frees and a new task starts) reads exactly the state that
replaying those events will rebuild. Tokens come from the injected source.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from app.core import events as ev
from app.core.budgets import charge, fingerprint
from app.core.effects import DispatchStage, Effect, FlushRemediation, PostCheck, PostComment
from app.core.inputs import (
    AssessmentFinished,
    EndRun,
    GateJudged,
    Input,
    IntegrationFinished,
    OperatorMove,
    SalvageFinished,
    StageFinished,
    StartRun,
)
from app.core.integration import halt_detail
from app.core.judging import FaultKind, judge
from app.core.outstanding import (
    assess_effect,
    attempt_key,
    integrate_effect,
    judge_effect,
    salvage_effect,
)
from app.core.pipeline import (
    DETERMINISTIC_GATES,
    FIRST_STAGE,
    FORWARD,
    TERMINAL_FAILURES,
    TICKET_CATEGORIES,
    can_fix_in_place,
    recovery_stage_for,
    spec,
)
from app.core.recovery import salvage_decision
from app.core.resume import advisory, assessed, finish, plan_recovery, start_resumes
from app.core.state import RunState, TaskState, apply

TokenSource = Callable[[], str]
# A moving fingerprint is never charged; this absolute backstop still bounds
# in-place attempts of one stage visit so a run cannot loop forever.
ATTEMPT_BACKSTOP = 25
RESUME_HINT = 'relaunch with resumePartialBranches=true and resumeMode="continue"'
STOP_RANK = {"failure": 1, "provider": 2, "infra": 2, "operator": 3, "auth": 4}


class CoreError(ValueError):
    """An input the core cannot accept in this state (a caller bug, not a run event)."""


def decide(state: RunState, inp: Input, tokens: TokenSource) -> tuple[list[ev.Event], list[Effect]]:
    d = Decider(state.clone(), inp.at, tokens)
    d.handle(inp)
    return d.events, d.effects


class Decider:
    def __init__(self, work: RunState, at: datetime, tokens: TokenSource) -> None:
        self.s = work
        self.at = at
        self.tokens = tokens
        self.events: list[ev.Event] = []
        self.effects: list[Effect] = []

    # -- plumbing ---------------------------------------------------------
    def emit(self, event: ev.Event) -> None:
        self.events.append(event)
        apply(self.s, event)

    def effect(self, effect: Effect) -> None:
        self.effects.append(effect)

    def key(self, *parts: object) -> str:
        return "/".join([self.s.run_id, *(str(p) for p in parts)])

    # -- inputs -----------------------------------------------------------
    def handle(self, inp: Input) -> None:
        if isinstance(inp, StartRun):
            if self.s.started:
                raise CoreError("the run has already started")
            self.start(inp)
        elif not self.s.started:
            raise CoreError(f"{inp.kind} before the run started")
        elif self.s.ended:
            raise CoreError(f"{inp.kind} after the run ended")
        elif isinstance(inp, StageFinished):
            self.stage_finished(inp)
        elif isinstance(inp, IntegrationFinished):
            self.integration_finished(inp)
        elif isinstance(inp, AssessmentFinished):
            self.assessment_finished(inp)
        elif isinstance(inp, SalvageFinished):
            self.salvage_finished(inp)
        elif isinstance(inp, GateJudged):
            self.gate_judged(inp)
        elif isinstance(inp, OperatorMove):
            from app.core.moves import apply_move

            apply_move(self, inp)
        elif isinstance(inp, EndRun):
            self.end()
            return
        self.fill()

    def start(self, inp: StartRun) -> None:
        self.emit(
            ev.RunStarted(
                at=self.at,
                run_id=inp.run_id,
                base=inp.base,
                roadmap=inp.roadmap,
                config=inp.config,
                held=inp.held,
                survivors=inp.survivors,
            )
        )
        assert self.s.roadmap is not None
        if not self.s.roadmap.valid:
            problems = "; ".join(p.message for p in self.s.roadmap.errors)
            self.stop("failure", f"roadmap has errors, nothing is scheduled: {problems}")
            return
        plan_recovery(self, inp)

    def end(self) -> None:
        failed = [t.id for t in self.s.tasks.values() if t.status == "failed"]
        m = self.s.metrics
        remediation = "none"
        if failed and (m.provider_faults or m.infra_faults or m.auth_faults):
            remediation = "suppressed"
        elif failed and not self.s.config.dry_run:
            remediation = "flushed"
            self.effect(FlushRemediation(key=self.key("flush"), failed=failed))
        finish(self)
        self.emit(ev.RunEnded(at=self.at, remediation=remediation))  # type: ignore[arg-type]

    # -- scheduling -------------------------------------------------------
    def fill(self) -> None:
        """Continue suspended work, then start ready tasks up to maxParallel."""
        s = self.s
        if s.stop is not None and s.stop.hard:
            return
        for t in list(s.tasks.values()):
            if t.status == "pending" and t.resume_at is not None:
                self.enter(t, t.resume_at, previous=None)
        if s.stop is not None or s.config.dry_run:
            return
        room = start_resumes(self, s.config.max_parallel - len(s.running()))
        for task_id in s.ready():
            if room <= 0:
                break
            t = s.task(task_id)
            if t.status != "pending":
                continue
            self.emit(ev.TaskStarted(at=self.at, task=t.id))
            self.enter(t, FIRST_STAGE, previous=None)
            room -= 1

    def suspended(self, t: TaskState, stage: str, when: str) -> bool:
        """A hard stop suspends the task where it stands instead of starting work."""
        if self.s.stop is None or not self.s.stop.hard:
            return False
        self.emit(
            ev.TaskSuspended(
                at=self.at,
                task=t.id,
                stage=stage,
                detail=f"run stopped {when}: {self.s.stop.reason}",
            )
        )
        return True

    def enter(
        self, t: TaskState, stage: str, *, previous: str | None, forward: bool = True
    ) -> None:
        if self.suspended(t, stage, f"before {stage}"):
            return
        self.emit(
            ev.StageEntered(at=self.at, task=t.id, stage=stage, previous=previous, forward=forward)
        )
        if stage == "integrate":
            self.integrate(t)
            return
        for lane in spec(stage).lanes:
            self.dispatch(t, stage, lane)

    def dispatch(self, t: TaskState, stage: str, lane: str) -> None:
        if self.suspended(t, stage, f"before retrying {stage}"):
            return
        token = self.tokens()
        number = t.attempts.get(stage, 0) + 1
        self.emit(
            ev.StageDispatched(
                at=self.at, task=t.id, stage=stage, attempt=number, lane=lane, token=token
            )
        )
        extras = {
            k: str(v) for k, v in t.overrides.items() if k in ("instructions", "agent", "model")
        }
        if t.feedback:
            extras["feedback"] = t.feedback
        if t.ticket is not None:
            extras["ticket"] = f"{t.ticket.category} from {t.ticket.origin}: {t.ticket.reason}"
        if t.assessment is not None and t.assessment.residual_risk:
            extras["residualRisk"] = "\n".join(t.assessment.residual_risk)
        elif (section := advisory(self.s, t)) is not None:
            extras["residualRisk"] = section
        self.effect(
            DispatchStage(
                key=attempt_key(self.s.run_id, t.id, stage, number, lane),
                task=t.id,
                unit=t.unit,  # type: ignore[arg-type]
                stage=stage,
                attempt=number,
                lane=lane,
                token=token,
                branch=t.branch,
                base=self.s.base,
                writes=spec(stage).writes,
                subtasks=list(t.subtasks),
                deadline_seconds=self.s.config.deadline(stage),
                extras=extras,
            )
        )

    def integrate(self, t: TaskState) -> None:
        if not self.s.config.auto_merge:
            self.emit(
                ev.TaskManualMergeReady(
                    at=self.at,
                    task=t.id,
                    detail="review passed; autoMerge is off: merge the branch by hand "
                    "or record it with `complete`",
                )
            )
            return
        self.emit(ev.IntegrationRequested(at=self.at, task=t.id))
        self.effect(integrate_effect(self.s, t))

    # -- stage results ----------------------------------------------------
    def stage_finished(self, inp: StageFinished) -> None:
        t = self.s.tasks.get(inp.task)
        if t is None:
            return
        attempt = next((a for a in t.live.values() if a.token == inp.token), None)
        if attempt is None or attempt.stage != inp.stage:
            self.emit(
                ev.StaleVerdictIgnored(
                    at=self.at,
                    task=t.id,
                    stage=inp.stage,
                    token=inp.token,
                    detail="no live attempt holds this token; the verdict is ignored",
                )
            )
            return
        j = judge(attempt.stage, attempt.token, inp.verdict, inp.fault)
        self.emit(
            ev.AttemptJudged(
                at=self.at,
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
        self.effect(
            PostCheck(
                key=self.key(t.id, attempt.stage, attempt.number, attempt.lane or "-", "check"),
                task=t.id,
                name=f"odw/{t.id}/{attempt.stage}" + (f"/{attempt.lane}" if attempt.lane else ""),
                conclusion="success" if j.outcome in ("passed", "changes") else "failure",
                summary=j.detail,
            )
        )
        stage, lane = attempt.stage, attempt.lane
        if j.outcome == "auth":
            self.record_fault(t, stage, "auth", j.detail, retried=False)
            self.fail(t, stage, f"auth failure: {j.detail}", kind="auth")
        elif j.outcome == "provider":
            self.record_fault(t, stage, "provider", j.detail, retried=False)
            self.emit(ev.TaskDeferred(at=self.at, task=t.id, stage=stage, detail=j.detail))
            self.stop(
                "provider",
                f"task {t.id} provider fault at {stage}: {j.detail}; deferred and requeued "
                "for the next run (not assessed)",
            )
        elif j.outcome == "infra":
            self.infra(t, stage, lane, j.detail)
        elif j.outcome == "failed":
            self.fail(t, stage, j.detail)
        elif j.outcome == "gate":
            assert j.gate is not None
            self.gate_failure(t, stage, lane, j.gate, j.detail)
        elif spec(stage).lanes != ("",) and (t.live or t.resume_at is not None):
            return  # wait for the other reviewer (or for resume, which re-runs the stage)
        elif j.outcome == "changes" or any(o == "changes" for o, _ in t.lane_results.values()):
            reasons = [d for o, d in t.lane_results.values() if o == "changes"] or [j.detail]
            self.review_changes(t, stage, "; ".join(reasons))
        else:
            self.advance(t, stage)

    def record_fault(
        self, t: TaskState, stage: str, kind: FaultKind, detail: str, *, retried: bool
    ) -> None:
        self.emit(
            ev.FaultRecorded(
                at=self.at,
                task=t.id,
                stage=stage,
                kind=kind,
                detail=detail,
                retried=retried,
            )
        )

    def infra(self, t: TaskState, stage: str, lane: str, detail: str) -> None:
        limit = int(t.overrides.get("stageAttempts", self.s.config.stage_attempts))
        if t.infra_faults + 1 < limit:
            self.record_fault(t, stage, "infra", detail, retried=True)
            self.dispatch(t, stage, lane)  # suspends instead while the run is halted
            return
        self.record_fault(t, stage, "infra", detail, retried=False)
        self.fail(
            t,
            stage,
            f"infrastructure fault persisted after {t.infra_faults} attempt(s): {detail}; "
            f"branch kept: {RESUME_HINT}",
            kind="infra",
        )

    def gate_failure(self, t: TaskState, stage: str, lane: str, gate: str, reason: str) -> None:
        if not can_fix_in_place(stage, gate):
            self.open_ticket(t, stage, gate, reason)
            return
        if t.visit_attempts >= ATTEMPT_BACKSTOP:
            self.fail(
                t, stage, f"{stage} made {t.visit_attempts} attempts without passing: {reason}"
            )
            return
        if self.charge(t, stage, gate, reason):
            self.dispatch(t, stage, lane)

    def charge(self, t: TaskState, stage: str, gate: str, reason: str) -> bool:
        """Charge the gate; True to retry. Exhaustion is handled here."""
        budgets = t.overrides.get("gateRetryBudget")
        budget = self.s.config.gate_budget(gate)
        if isinstance(budgets, int):
            budget = budgets
        elif isinstance(budgets, dict) and gate in budgets:
            budget = int(budgets[gate])
        ledger = t.ledger(stage, gate)
        c = charge(ledger, fingerprint(reason), budget)
        self.emit(
            ev.GateCharged(
                at=self.at,
                task=t.id,
                stage=stage,
                gate=gate,
                fingerprint=c.ledger.fingerprint or "",
                charged=c.charged,
                decision=c.decision,
                charges=c.ledger.charges,
                budget=budget,
            )
        )
        if c.decision == "retry":
            return True
        if gate in DETERMINISTIC_GATES:
            self.fail(
                t, stage, f"{gate} gate budget exhausted ({budget}) on a repeated failure: {reason}"
            )
        elif ledger.salvage_used:
            self.fail(t, stage, f"{gate} gate exhausted again after its one reset: {reason}")
        else:
            self.emit(
                ev.JudgeRequested(at=self.at, task=t.id, stage=stage, gate=gate, reason=reason)
            )
            self.effect(judge_effect(self.s, t, stage, gate, reason))
        return False

    def open_ticket(self, t: TaskState, origin: str, gate: str, reason: str) -> None:
        used = t.routes.get(origin, 0)
        budget = self.s.config.route_budget_for(origin)
        if isinstance(t.overrides.get("routeBudget"), int):
            budget = t.overrides["routeBudget"]
        if used >= budget:
            self.fail(
                t,
                origin,
                f"route budget exhausted ({budget}) for {gate} failures at {origin}: {reason}",
            )
            return
        category, capability = TICKET_CATEGORIES[gate]
        route = recovery_stage_for(capability)
        self.emit(
            ev.TicketOpened(
                at=self.at,
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
        self.enter(t, route, previous=origin, forward=False)

    def review_changes(self, t: TaskState, stage: str, reason: str) -> None:
        rounds, limit = (
            (t.design_rounds, self.s.config.max_design_rounds)
            if stage == "design-review"
            else (t.review_rounds, self.s.config.max_review_rounds)
        )
        if rounds >= limit:
            self.fail(t, stage, f"{stage} still requests changes after {rounds} round(s): {reason}")
        elif self.charge(t, stage, "review", reason):
            self.remedy(t, stage)

    def remedy(self, t: TaskState, stage: str) -> None:
        """Re-plan after design review, fix after review; a writer retries in place."""
        if stage == "design-review":
            self.enter(t, "plan", previous=stage, forward=False)
        elif stage == "review":
            self.enter(t, "fix", previous=stage, forward=False)
        else:
            self.dispatch(t, stage, "")

    def gate_judged(self, inp: GateJudged) -> None:
        t = self.s.tasks.get(inp.task)
        if t is None or t.awaiting != "judge":
            return
        self.emit(
            ev.SalvageDecided(
                at=self.at,
                task=t.id,
                stage=inp.stage,
                gate=inp.gate,
                decision=inp.decision,
                by=inp.by,
            )
        )
        if inp.decision == "continue":
            self.remedy(t, inp.stage)
        elif inp.decision == "recover":
            self.open_ticket(t, inp.stage, inp.gate, t.feedback or "review findings")
        else:
            self.fail(t, inp.stage, f"the {inp.gate} gate judge decided FAIL: {t.feedback}")

    def advance(self, t: TaskState, stage: str) -> None:
        if t.ticket is not None and stage == t.ticket.route:
            origin = t.ticket.origin
            self.emit(ev.TicketClosed(at=self.at, task=t.id, ticket=t.ticket.number, origin=origin))
            self.enter(t, origin, previous=stage)
            return
        if stage == "integrate":
            self.emit(ev.TaskLanded(at=self.at, task=t.id, sha=None))
            return
        self.enter(t, FORWARD[stage], previous=stage)

    # -- integration, assessment, salvage --------------------------------
    def integration_finished(self, inp: IntegrationFinished) -> None:
        t = self.s.tasks.get(inp.task)
        if t is None or t.awaiting != "integrate":
            return
        self.emit(ev.IntegrationRecorded(at=self.at, task=t.id, report=inp.report, fault=inp.fault))
        if inp.report is None or inp.fault is not None:
            self.record_fault(t, "integrate", "infra", inp.fault or "no report", retried=False)
            self.fail(
                t,
                "integrate",
                f"integration faulted ({inp.fault or 'no report'}); never retried because a "
                f"hidden first attempt may already have pushed: inspect origin/{self.s.base} "
                "and the roadmap before relaunching",
                kind="infra",
            )
            return
        detail = halt_detail(inp.report)
        if detail is None:
            self.emit(ev.TaskLanded(at=self.at, task=t.id, sha=inp.report.sha))
        else:
            self.fail(t, "integrate", detail)

    def assessment_finished(self, inp: AssessmentFinished) -> None:
        t = self.s.tasks.get(inp.task)
        if t is not None and t.awaiting == "recovery-assess":
            assessed(self, t, inp.assessment)
            return
        if t is None or t.awaiting != "assess":
            return
        self.emit(ev.AssessmentRecorded(at=self.at, task=t.id, assessment=inp.assessment))
        self.salvage(t, inp.assessment.classification)

    def salvage(self, t: TaskState, classification: str) -> None:
        run, reason = salvage_decision(
            classification,
            assess_enabled=self.s.config.assess_partial_branches,
            evidence_error=t.assessment is not None and t.assessment.evidence_error is not None,
            has_branch=t.branch_started,
        )
        if not run:
            from app.core.assessment import SalvageResult

            skipped = SalvageResult(classification=classification, skipped=True, detail=reason)
            self.emit(ev.SalvageRecorded(at=self.at, task=t.id, salvage=skipped))
            return
        self.emit(ev.SalvageRequested(at=self.at, task=t.id, classification=classification))
        self.effect(salvage_effect(self.s, t, classification))

    def salvage_finished(self, inp: SalvageFinished) -> None:
        t = self.s.tasks.get(inp.task)
        if t is None or t.awaiting != "salvage":
            return
        self.emit(ev.SalvageRecorded(at=self.at, task=t.id, salvage=inp.salvage))

    # -- failure ----------------------------------------------------------
    def fail(self, t: TaskState, stage: str, detail: str, *, kind: str = "failure") -> None:
        """Keep the branch, park dependents, stop fan-out; assess product failures."""
        status = "infra-fault" if kind == "infra" else "failed"
        self.emit(ev.TaskFailed(at=self.at, task=t.id, stage=stage, status=status, detail=detail))  # type: ignore[arg-type]
        self.park_dependents()
        if kind == "auth":
            self.stop(
                kind,
                f"task {t.id} auth failure at {stage}: {detail}; fix the "
                "credentials, then resume (nothing is dispatched until then)",
            )
        else:
            self.stop(kind, f"task {t.id} {status} at {stage}: {detail}")
        self.effect(
            PostComment(
                key=self.key(t.id, "failed", sum(t.attempts.values())),
                task=t.id,
                body=f"Task {t.id} {status} at {stage}: {detail}. The branch {t.branch} is kept; "
                f"`retry {t.id}` starts it again from the base tip.",
            )
        )
        cfg = self.s.config
        if not cfg.assess_partial_branches or cfg.dry_run or not t.branch_started:
            return
        if kind == "failure":
            self.emit(ev.AssessmentRequested(at=self.at, task=t.id))
            self.effect(assess_effect(self.s, t))
        elif kind == "infra" and stage != "integrate":
            self.salvage(t, "infra-fault")

    def stop(self, kind: str, reason: str) -> None:
        current = self.s.stop
        if current is not None and STOP_RANK[current.kind] >= STOP_RANK[kind]:
            return
        self.emit(ev.RunStopped(at=self.at, kind=kind, reason=reason))  # type: ignore[arg-type]

    def park_dependents(self) -> None:
        for task_id, root in doomed(self.s).items():
            t = self.s.task(task_id)
            if t.status == "pending" and t.resume_at is None:
                self.emit(ev.TaskParked(at=self.at, task=task_id, because=root))

    def release(self) -> None:
        """Unpark tasks no longer downstream of a failure; lift a stop nobody needs."""
        still = doomed(self.s)
        for t in list(self.s.tasks.values()):
            if t.status == "blocked" and t.id not in still:
                self.emit(ev.TaskReleased(at=self.at, task=t.id))
        stop = self.s.stop
        outstanding = [
            t for t in self.s.tasks.values() if t.status in TERMINAL_FAILURES | {"deferred"}
        ]
        if stop is not None and not stop.hard and not outstanding:
            self.emit(ev.StopLifted(at=self.at, reason="no failed or deferred task remains"))


def depends_on(t: TaskState, other: TaskState) -> bool:
    """Whether `t` names `other` (its id, a prefix of it, or one of its addenda)."""
    return any(
        d == other.id or other.id.startswith(d + ".") or d in other.subtasks for d in t.requires
    )


def doomed(s: RunState) -> dict[str, str]:
    """Waiting tasks downstream (transitively) of a failed one, with that root."""
    roots = [t for t in s.tasks.values() if t.status in TERMINAL_FAILURES]
    waiting = [t for t in s.tasks.values() if t.status in ("pending", "blocked")]
    out: dict[str, str] = {}
    frontier_ = [(r, r.id) for r in roots]
    while frontier_:
        node, root = frontier_.pop(0)
        for w in waiting:
            if w.id not in out and w.id != node.id and depends_on(w, node):
                out[w.id] = root
                frontier_.append((w, root))
    return out
