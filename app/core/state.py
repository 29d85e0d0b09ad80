"""Run state: the fold of the event log, and nothing else.

`fold(events)` rebuilds the state from scratch; `apply` records one event
through its reducer in `REDUCERS` (one per event type, as `decide` has one
handler per input type; a test keeps the table complete). No decision lives
here: a reducer only records what an event says happened, so replaying a log
always reproduces the state the deciding code saw.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import ConfigDict

from app.core import events as ev
from app.core import recovery_state
from app.core.assessment import Assessment, SalvageResult
from app.core.budgets import Ledger
from app.core.config import RunConfig
from app.core.naming import addendum_branch, kept_branch, task_branch
from app.core.pipeline import TaskStatus, spec
from app.core.recovery_state import Recovery
from app.core.roadmap import Roadmap
from app.core.roadmap_parse import parse_roadmap
from app.core.selection import frontier

# The answer a task waits for; `survivor-assess` is a surviving branch's assessment.
Awaiting = Literal["integrate", "assess", "salvage", "survivor-assess", "judge"]
UnitKind = Literal["normal", "addendum"]
StopKind = Literal["failure", "provider", "infra", "auth", "operator"]


@dataclass
class Attempt:
    stage: str
    number: int
    lane: str
    token: str


@dataclass
class Ticket:
    number: int
    origin: str
    gate: str
    category: str
    route: str
    reason: str


@dataclass
class Stop:
    kind: StopKind
    reason: str

    @property
    def hard(self) -> bool:
        """Auth and operator halts stop every dispatch, not only new tasks."""
        return self.kind in ("auth", "operator")


@dataclass
class TaskState:
    id: str
    unit: UnitKind
    branch: str
    subtasks: tuple[str, ...]
    line: int
    requires: tuple[str, ...]
    status: TaskStatus = "pending"
    stage: str | None = None
    detail: str = ""
    resume_at: str | None = None
    attempts: dict[str, int] = field(default_factory=dict)
    live: dict[str, Attempt] = field(default_factory=dict)
    lane_results: dict[str, tuple[str, str]] = field(default_factory=dict)
    infra_faults: int = 0
    visit_attempts: int = 0
    ledgers: dict[str, Ledger] = field(default_factory=dict)
    routes: dict[str, int] = field(default_factory=dict)
    tickets_opened: int = 0
    ticket: Ticket | None = None
    design_rounds: int = 0
    review_rounds: int = 0
    feedback: str = ""
    verdict: dict[str, Any] | None = None
    overrides: dict[str, Any] = field(default_factory=dict)
    forced: bool = False
    awaiting: Awaiting | None = None
    branch_started: bool = False
    landed_sha: str | None = None
    assessment: Assessment | None = None
    salvage: SalvageResult | None = None
    # Operator restarts (retry, recover, rearm) so far, and each stage's attempt
    # count when the current cycle began: attempts are shown per cycle, while
    # `attempts` keeps numbering them for the run (idempotency keys stay unique).
    retries: int = 0
    cycle_from: dict[str, int] = field(default_factory=dict)
    # The gate whose budget ran out on a repeated failure, and that budget.
    exhausted: tuple[str, int] | None = None
    # After a retry, until its first write attempt is dispatched: the branch that
    # keeps the earlier work while the task branch starts again from the base.
    fresh: str | None = None

    def ledger(self, stage: str, gate: str) -> Ledger:
        return self.ledgers.get(f"{stage}/{gate}", Ledger())

    def cycle_attempt(self, stage: str) -> int:
        """Attempts of `stage` in the current retry cycle."""
        return self.attempts.get(stage, 0) - self.cycle_from.get(stage, 0)

    def cycle_attempts(self) -> dict[str, int]:
        """Every stage tried in the current retry cycle, with its attempts there."""
        counts = {stage: self.cycle_attempt(stage) for stage in self.attempts}
        return {stage: n for stage, n in counts.items() if n > 0}

    @property
    def busy(self) -> bool:
        return bool(self.live) or self.awaiting is not None


@dataclass
class FaultMetrics:
    infra_retries: int = 0
    infra_faults: int = 0
    provider_faults: int = 0
    auth_faults: int = 0

    def to_json(self) -> dict[str, int]:
        return {
            "infraRetries": self.infra_retries,
            "infraFaults": self.infra_faults,
            "providerFaults": self.provider_faults,
            "authFaults": self.auth_faults,
        }


@dataclass
class RunState:
    # For the snapshot's schema (`snapshot.py`): the parsed roadmap is not written
    # there, it is rebuilt from the run's start.
    __pydantic_config__ = ConfigDict(arbitrary_types_allowed=True)

    run_id: str = ""
    base: str = "main"
    roadmap: Roadmap | None = None
    config: RunConfig = field(default_factory=RunConfig)
    # Ids the launcher kept out of selection (`RunStarted.held`, e.g. `--task`);
    # ids held by surviving branches live in `recovery.held`.
    excluded: tuple[str, ...] = ()
    tasks: dict[str, TaskState] = field(default_factory=dict)
    stop: Stop | None = None
    metrics: FaultMetrics = field(default_factory=FaultMetrics)
    landed: list[str] = field(default_factory=list)
    moves: list[dict[str, Any]] = field(default_factory=list)
    ended: bool = False
    remediation: str = "none"
    recovery: Recovery = field(default_factory=Recovery)
    version: int = 0

    @property
    def started(self) -> bool:
        return self.roadmap is not None

    def task(self, task_id: str) -> TaskState:
        return self.tasks[task_id]

    def running(self) -> list[TaskState]:
        return [t for t in self.tasks.values() if t.status == "running"]

    def live_attempts(self) -> list[tuple[TaskState, Attempt]]:
        return [(t, a) for t in self.tasks.values() for a in t.live.values()]

    def held_out(self) -> tuple[str, ...]:
        """Every id kept out of selection: the launcher's, then the survivors'."""
        return tuple(dict.fromkeys([*self.excluded, *self.recovery.held]))

    def clone(self) -> RunState:
        # The parsed roadmap is immutable and shared; everything else is copied.
        memo: dict[int, Any] = {id(self.roadmap): self.roadmap}
        return copy.deepcopy(self, memo)

    def effective_roadmap(self) -> Roadmap:
        """The roadmap as the base branch now reads: landed work counts as ticked."""
        assert self.roadmap is not None
        done: set[str] = set()
        for t in self.tasks.values():
            if t.status == "landed":
                done.update(t.subtasks if t.unit == "addendum" else (t.id,))
        if not done:
            return self.roadmap
        return self.roadmap.replace(
            tasks=tuple(t.replace(done=True) if t.id in done else t for t in self.roadmap.tasks)
        )

    def ready(self) -> list[str]:
        """Unit ids whose dependencies have landed, in selection order.

        The second guard: readiness is derived from landed work only, so a task
        with a failed or unlanded dependency is never ready, whatever its status.
        """
        taken = [t.id for t in self.tasks.values() if t.status != "pending"]
        return [
            c.id
            for c in frontier(self.effective_roadmap(), taken=taken, held=self.held_out()).ready
        ]


def units_of(roadmap: Roadmap) -> dict[str, TaskState]:
    """Every open normal task, and one addendum unit per ticked parent with open addenda."""
    units: dict[str, TaskState] = {}
    for t in roadmap.tasks:
        if t.is_addendum:
            continue
        if not t.done:
            units[t.id] = TaskState(
                t.id, "normal", _branch(t.id, False), (), t.line, tuple(t.requires)
            )
            continue
        open_addenda = [a for a in roadmap.addenda(t.id) if not a.done]
        if open_addenda:
            requires = tuple(dict.fromkeys(r for a in open_addenda for r in a.requires))
            units[t.id] = TaskState(
                t.id,
                "addendum",
                _branch(t.id, True),
                tuple(a.id for a in open_addenda),
                open_addenda[0].line,
                requires,
            )
    return dict(sorted(units.items(), key=lambda kv: kv[1].line))


def _branch(task_id: str, addendum: bool) -> str:
    return addendum_branch(task_id) if addendum else task_branch(task_id)


def fold(events: Iterable[ev.Event]) -> RunState:
    state = RunState()
    for e in events:
        apply(state, e)
    return state


def apply(s: RunState, e: ev.Event) -> None:
    """Record one event on the state in place, through its reducer in `REDUCERS`."""
    s.version += 1
    REDUCERS[type(e)](s, e)


# -- the run ---------------------------------------------------------------------


def _run_started(s: RunState, e: ev.RunStarted) -> None:
    s.run_id, s.base, s.config, s.excluded = e.run_id, e.base, e.config, tuple(e.held)
    s.roadmap = started_roadmap(e)
    s.tasks = units_of(s.roadmap)
    s.recovery = Recovery(survivors={v.branch: v for v in e.survivors})


def started_roadmap(e: ev.RunStarted) -> Roadmap:
    """The roadmap a run works on, as its start recorded it (a snapshot puts it back)."""
    return parse_roadmap(e.roadmap, external_met=e.config.external_met)


def _run_stopped(s: RunState, e: ev.RunStopped) -> None:
    s.stop = Stop(e.kind, e.reason)


def _stop_lifted(s: RunState, e: ev.StopLifted) -> None:
    s.stop = None


def _run_halted(s: RunState, e: ev.RunHalted) -> None:
    s.stop = Stop("operator", f"halted by {e.by}: {e.reason}" if e.reason else f"halted by {e.by}")
    s.moves.append({"move": "halt", "by": e.by, "reason": e.reason})


def _run_resumed(s: RunState, e: ev.RunResumed) -> None:
    s.stop = None
    s.moves.append({"move": "resume", "by": e.by, "reason": e.reason})


def _move_rejected(s: RunState, e: ev.MoveRejected) -> None:
    s.moves.append(
        {"move": e.move, "task": e.task, "by": e.by, "reason": e.reason, "rejected": e.why}
    )


def _run_ended(s: RunState, e: ev.RunEnded) -> None:
    s.ended, s.remediation = True, e.remediation


# -- recovery (its slice is `recovery_state`'s; a task event also names a known task) --


def _recovery_planned(s: RunState, e: ev.RecoveryPlanned) -> None:
    recovery_state.planned(s.recovery, e)


def _recovery_unresolved(s: RunState, e: ev.RecoveryUnresolved) -> None:
    recovery_state.unresolved(s.recovery, e)


def _recovery_assess_requested(s: RunState, e: ev.RecoveryAssessRequested) -> None:
    s.tasks[e.task].awaiting = "survivor-assess"


def _recovery_assessed(s: RunState, e: ev.RecoveryAssessed) -> None:
    recovery_state.assessed(s.recovery, e)
    s.tasks[e.task].awaiting = None


def _recovery_decided(s: RunState, e: ev.RecoveryDecided) -> None:
    recovery_state.decided(s.recovery, e)
    _ = s.tasks[e.task]  # like every task event, it names a task of the run


def _recovery_resumed(s: RunState, e: ev.RecoveryResumed) -> None:
    recovery_state.resumed(s.recovery, e)
    t = s.tasks[e.task]
    t.status, t.detail, t.branch_started = "running", "", True


# -- a task's work -----------------------------------------------------------------


def _task_started(s: RunState, e: ev.TaskStarted) -> None:
    t = s.tasks[e.task]
    t.status, t.forced, t.detail = "running", e.forced, ""


def _stage_entered(s: RunState, e: ev.StageEntered) -> None:
    t = s.tasks[e.task]
    if e.forward and e.previous is not None:
        for key in [k for k in t.ledgers if k.startswith(e.previous + "/")]:
            del t.ledgers[key]
    new_visit = e.previous is not None or t.stage != e.stage
    if new_visit:
        t.infra_faults = t.visit_attempts = 0
        if e.stage == "design-review":
            t.design_rounds += 1
        elif e.stage == "review":
            t.review_rounds += 1
    t.stage, t.resume_at, t.lane_results, t.live = e.stage, None, {}, {}
    t.status = "running"


def _stage_dispatched(s: RunState, e: ev.StageDispatched) -> None:
    t = s.tasks[e.task]
    t.attempts[e.stage] = t.attempts.get(e.stage, 0) + 1
    t.visit_attempts += 1
    t.live[e.lane] = Attempt(e.stage, e.attempt, e.lane, e.token)
    if spec(e.stage).writes:
        t.branch_started, t.fresh = True, None


def _attempt_judged(s: RunState, e: ev.AttemptJudged) -> None:
    t = s.tasks[e.task]
    t.live.pop(e.lane, None)
    t.verdict = {
        "stage": e.stage,
        "attempt": e.attempt,
        "lane": e.lane or None,
        "outcome": e.outcome,
        "passed": e.outcome == "passed",
        "detail": e.detail,
        "checks": [c.model_dump(mode="json", exclude_defaults=True) for c in e.checks],
    }
    if e.lane:
        t.lane_results[e.lane] = (e.outcome, e.detail)
    if e.outcome in ("gate", "changes"):
        t.feedback = e.detail


def _stale_verdict_ignored(s: RunState, e: ev.StaleVerdictIgnored) -> None:
    _ = s.tasks[e.task]  # only for the log; like every task event, it names a task of the run


def _fault_recorded(s: RunState, e: ev.FaultRecorded) -> None:
    t, m = s.tasks[e.task], s.metrics
    if e.kind == "infra":
        t.infra_faults += 1
        if e.retried:
            m.infra_retries += 1
        else:
            m.infra_faults += 1
    elif e.kind == "provider":
        m.provider_faults += 1
    else:
        m.auth_faults += 1


def _gate_charged(s: RunState, e: ev.GateCharged) -> None:
    t = s.tasks[e.task]
    old = t.ledger(e.stage, e.gate)
    t.ledgers[f"{e.stage}/{e.gate}"] = Ledger(e.fingerprint, e.charges, old.reset_used)
    if e.decision == "exhausted":
        t.exhausted = (e.gate, e.budget)


def _judge_requested(s: RunState, e: ev.JudgeRequested) -> None:
    s.tasks[e.task].awaiting = "judge"


def _gate_judge_decided(s: RunState, e: ev.GateJudgeDecided) -> None:
    t = s.tasks[e.task]
    t.awaiting = None
    if e.decision == "continue":
        t.ledgers[f"{e.stage}/{e.gate}"] = Ledger(None, 0, reset_used=True)


def _ticket_opened(s: RunState, e: ev.TicketOpened) -> None:
    t = s.tasks[e.task]
    t.tickets_opened = e.ticket
    t.routes[e.origin] = t.routes.get(e.origin, 0) + 1
    t.ticket = Ticket(e.ticket, e.origin, e.gate, e.category, e.route, e.reason)


def _ticket_closed(s: RunState, e: ev.TicketClosed) -> None:
    s.tasks[e.task].ticket = None


# -- a task's status -----------------------------------------------------------------


def _task_failed(s: RunState, e: ev.TaskFailed) -> None:
    t = s.tasks[e.task]
    t.status, t.stage, t.detail, t.live = e.status, e.stage, e.detail, {}


def _task_deferred(s: RunState, e: ev.TaskDeferred) -> None:
    t = s.tasks[e.task]
    t.status, t.stage, t.detail, t.live = "deferred", e.stage, e.detail, {}


def _task_parked(s: RunState, e: ev.TaskParked) -> None:
    t = s.tasks[e.task]
    t.status = "blocked"
    t.detail = f"parked: depends on {e.because}, which did not land"


def _task_released(s: RunState, e: ev.TaskReleased) -> None:
    t = s.tasks[e.task]
    t.status, t.detail = "pending", ""


def _task_suspended(s: RunState, e: ev.TaskSuspended) -> None:
    t = s.tasks[e.task]
    t.status, t.resume_at, t.detail = "pending", e.stage, e.detail


# -- landing, assessment and salvage ---------------------------------------------------


def _integration_requested(s: RunState, e: ev.IntegrationRequested) -> None:
    t = s.tasks[e.task]
    t.awaiting, t.stage = "integrate", "integrate"
    t.attempts["integrate"] = t.attempts.get("integrate", 0) + 1


def _integration_recorded(s: RunState, e: ev.IntegrationRecorded) -> None:
    s.tasks[e.task].awaiting = None


def _task_landed(s: RunState, e: ev.TaskLanded) -> None:
    t = s.tasks[e.task]
    t.status, t.landed_sha, t.detail, t.stage = "landed", e.sha, "", "integrate"
    s.landed.append(t.id)


def _task_merged_by_person(s: RunState, e: ev.TaskMergedByPerson) -> None:
    t = s.tasks[e.task]
    t.status, t.landed_sha, t.stage = "landed", e.sha, "integrate"
    t.detail = f"pull request #{e.number} merged by {e.by}"
    t.live, t.awaiting = {}, None
    s.landed.append(t.id)


def _task_manual_merge_ready(s: RunState, e: ev.TaskManualMergeReady) -> None:
    t = s.tasks[e.task]
    t.status, t.detail = "manual-merge-ready", e.detail


def _assessment_requested(s: RunState, e: ev.AssessmentRequested) -> None:
    s.tasks[e.task].awaiting = "assess"


def _assessment_recorded(s: RunState, e: ev.AssessmentRecorded) -> None:
    t = s.tasks[e.task]
    t.awaiting, t.assessment = None, e.assessment


def _salvage_requested(s: RunState, e: ev.SalvageRequested) -> None:
    s.tasks[e.task].awaiting = "salvage"


def _salvage_recorded(s: RunState, e: ev.SalvageRecorded) -> None:
    t = s.tasks[e.task]
    t.awaiting, t.salvage = None, e.salvage


# -- operator moves on a task ------------------------------------------------------------


def _task_retried(s: RunState, e: ev.TaskRetried) -> None:
    t = s.tasks[e.task]
    kept = t.branch_started
    _reset(t)
    t.fresh = kept_branch(t.branch, t.retries) if kept else None
    s.moves.append({"move": "retry", "task": t.id, "by": e.by, "reason": e.reason})


def _task_rearmed(s: RunState, e: ev.TaskRearmed) -> None:
    t = s.tasks[e.task]
    _reset(t)
    t.overrides = {**t.overrides, **e.overrides}
    t.resume_at = e.stage
    s.moves.append({"move": "rearm", "task": t.id, "by": e.by, "reason": e.reason})


def _task_recovered(s: RunState, e: ev.TaskRecovered) -> None:
    t = s.tasks[e.task]
    _reset(t)
    t.resume_at = e.stage
    s.moves.append(
        {"move": "recover", "task": t.id, "stage": e.stage, "by": e.by, "reason": e.reason}
    )


def _stage_completed_manually(s: RunState, e: ev.StageCompletedManually) -> None:
    t = s.tasks[e.task]
    t.verdict = {
        "stage": e.stage,
        "outcome": "passed",
        "passed": True,
        "detail": "manual pass",
        "checks": [c.model_dump(mode="json", exclude_defaults=True) for c in e.checks],
    }
    t.status, t.detail, t.live = "running", "", {}
    s.moves.append(
        {"move": "complete", "task": t.id, "stage": e.stage, "by": e.by, "reason": e.reason}
    )


def _task_force_started(s: RunState, e: ev.TaskForceStarted) -> None:
    t = s.tasks[e.task]
    s.moves.append({"move": "force-start", "task": t.id, "by": e.by, "reason": e.reason})


def _reset(t: TaskState) -> None:
    """Back to pending for a new retry cycle: verdict, output summary, budgets and
    the cycle's attempt counts cleared (the run's attempt numbering goes on)."""
    t.retries += 1
    t.cycle_from = dict(t.attempts)
    t.exhausted = t.fresh = None
    t.status, t.stage, t.detail, t.resume_at = "pending", None, "", None
    t.verdict, t.feedback, t.live, t.lane_results = None, "", {}, {}
    t.infra_faults = t.visit_attempts = 0
    t.ledgers, t.routes, t.ticket = {}, {}, None
    t.design_rounds = t.review_rounds = 0
    t.assessment = t.salvage = None
    t.awaiting, t.forced = None, False


Reducer = Callable[[RunState, Any], None]

# One reducer per event type, as `decide` has one handler per input type.
REDUCERS: dict[type, Reducer] = {
    ev.RunStarted: _run_started,
    ev.TaskStarted: _task_started,
    ev.StageEntered: _stage_entered,
    ev.StageDispatched: _stage_dispatched,
    ev.AttemptJudged: _attempt_judged,
    ev.StaleVerdictIgnored: _stale_verdict_ignored,
    ev.FaultRecorded: _fault_recorded,
    ev.GateCharged: _gate_charged,
    ev.GateJudgeDecided: _gate_judge_decided,
    ev.JudgeRequested: _judge_requested,
    ev.TicketOpened: _ticket_opened,
    ev.TicketClosed: _ticket_closed,
    ev.TaskFailed: _task_failed,
    ev.TaskDeferred: _task_deferred,
    ev.TaskParked: _task_parked,
    ev.TaskReleased: _task_released,
    ev.TaskSuspended: _task_suspended,
    ev.IntegrationRequested: _integration_requested,
    ev.IntegrationRecorded: _integration_recorded,
    ev.TaskLanded: _task_landed,
    ev.TaskMergedByPerson: _task_merged_by_person,
    ev.TaskManualMergeReady: _task_manual_merge_ready,
    ev.AssessmentRequested: _assessment_requested,
    ev.AssessmentRecorded: _assessment_recorded,
    ev.SalvageRequested: _salvage_requested,
    ev.SalvageRecorded: _salvage_recorded,
    ev.RecoveryPlanned: _recovery_planned,
    ev.RecoveryAssessRequested: _recovery_assess_requested,
    ev.RecoveryAssessed: _recovery_assessed,
    ev.RecoveryDecided: _recovery_decided,
    ev.RecoveryResumed: _recovery_resumed,
    ev.RecoveryUnresolved: _recovery_unresolved,
    ev.RunStopped: _run_stopped,
    ev.StopLifted: _stop_lifted,
    ev.TaskRetried: _task_retried,
    ev.TaskRearmed: _task_rearmed,
    ev.TaskRecovered: _task_recovered,
    ev.StageCompletedManually: _stage_completed_manually,
    ev.TaskForceStarted: _task_force_started,
    ev.RunHalted: _run_halted,
    ev.RunResumed: _run_resumed,
    ev.MoveRejected: _move_rejected,
    ev.RunEnded: _run_ended,
}
