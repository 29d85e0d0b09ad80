"""The run log: typed, versioned events, and their plain-JSON form.

A run is an append-only list of these; state is their fold. Stores persist the
JSON dicts (`{"type": ..., "version": ..., ...}`) without importing the
classes, and replay refuses an unknown type or version instead of guessing.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError
from pydantic.alias_generators import to_camel

from app.core.assessment import Assessment, SalvageResult
from app.core.config import RunConfig
from app.core.discovery import Survivor
from app.core.integration_schema import Report
from app.core.verdict import Check, Verdict


class ReplayError(ValueError):
    """A log entry the core cannot read back; replay stops rather than guess."""


class _Event(BaseModel):
    model_config = ConfigDict(
        alias_generator=to_camel, populate_by_name=True, extra="forbid", frozen=True
    )
    version: Literal[1] = 1
    at: datetime


class _TaskEvent(_Event):
    task: str


class RunStarted(_Event):
    type: Literal["run-started"] = "run-started"
    run_id: str
    base: str
    roadmap: str
    config: RunConfig
    held: list[str] = Field(default_factory=list)
    survivors: list[Survivor] = Field(default_factory=list)


class TaskStarted(_TaskEvent):
    type: Literal["task-started"] = "task-started"
    forced: bool = False


class StageEntered(_TaskEvent):
    """TransitionExecuted: leaving a stage forward resets its gate ledgers."""

    type: Literal["stage-entered"] = "stage-entered"
    stage: str
    previous: str | None = None
    forward: bool = True


class StageDispatched(_TaskEvent):
    type: Literal["stage-dispatched"] = "stage-dispatched"
    stage: str
    attempt: int
    lane: str = ""
    token: str


class AttemptJudged(_TaskEvent):
    type: Literal["attempt-judged"] = "attempt-judged"
    stage: str
    attempt: int
    lane: str = ""
    token: str
    outcome: str
    detail: str
    gate: str | None = None
    checks: list[Check] = Field(default_factory=list)
    verdict: Verdict | None = None


class StaleVerdictIgnored(_TaskEvent):
    type: Literal["stale-verdict-ignored"] = "stale-verdict-ignored"
    stage: str
    token: str
    detail: str


class FaultRecorded(_TaskEvent):
    type: Literal["fault-recorded"] = "fault-recorded"
    stage: str
    kind: Literal["infra", "provider", "auth"]
    detail: str
    retried: bool = False


class GateCharged(_TaskEvent):
    type: Literal["gate-charged"] = "gate-charged"
    stage: str
    gate: str
    fingerprint: str
    charged: bool
    decision: Literal["retry", "exhausted"]
    charges: int
    budget: int


class GateJudgeDecided(_TaskEvent):
    """The review-gate judge's answer on exhaustion (seed 001 invariant #9).

    `continue` resets the gate's budget once. The stored type keeps its first
    name, `salvage-decided`, so logs written before the rename still replay.
    """

    type: Literal["salvage-decided"] = "salvage-decided"
    stage: str
    gate: str
    decision: Literal["continue", "recover", "fail"]
    by: str


class JudgeRequested(_TaskEvent):
    type: Literal["judge-requested"] = "judge-requested"
    stage: str
    gate: str
    reason: str


class TicketOpened(_TaskEvent):
    type: Literal["ticket-opened"] = "ticket-opened"
    ticket: int
    origin: str
    gate: str
    category: str
    capability: str
    route: str
    reason: str


class TicketClosed(_TaskEvent):
    type: Literal["ticket-closed"] = "ticket-closed"
    ticket: int
    origin: str


class TaskFailed(_TaskEvent):
    type: Literal["task-failed"] = "task-failed"
    stage: str
    status: Literal["failed", "infra-fault"]
    detail: str


class TaskDeferred(_TaskEvent):
    type: Literal["task-deferred"] = "task-deferred"
    stage: str
    detail: str


class TaskParked(_TaskEvent):
    type: Literal["task-parked"] = "task-parked"
    because: str


class TaskReleased(_TaskEvent):
    type: Literal["task-released"] = "task-released"


class TaskSuspended(_TaskEvent):
    """A halted run leaves the task pending at the stage it would enter next."""

    type: Literal["task-suspended"] = "task-suspended"
    stage: str
    detail: str


class IntegrationRequested(_TaskEvent):
    type: Literal["integration-requested"] = "integration-requested"


class IntegrationRecorded(_TaskEvent):
    type: Literal["integration-recorded"] = "integration-recorded"
    report: Report | None = None
    fault: str | None = None


class TaskLanded(_TaskEvent):
    type: Literal["task-landed"] = "task-landed"
    sha: str | None = None


class TaskMergedByPerson(_TaskEvent):
    """A person merged the task's pull request: landed, whatever was still running."""

    type: Literal["task-merged-by-person"] = "task-merged-by-person"
    number: int
    sha: str | None = None
    by: str


class TaskManualMergeReady(_TaskEvent):
    type: Literal["task-manual-merge-ready"] = "task-manual-merge-ready"
    detail: str


class AssessmentRequested(_TaskEvent):
    type: Literal["assessment-requested"] = "assessment-requested"


class AssessmentRecorded(_TaskEvent):
    type: Literal["assessment-recorded"] = "assessment-recorded"
    assessment: Assessment


class SalvageRequested(_TaskEvent):
    type: Literal["salvage-requested"] = "salvage-requested"
    classification: str


class SalvageRecorded(_TaskEvent):
    type: Literal["salvage-recorded"] = "salvage-recorded"
    salvage: SalvageResult


class RecoveryPlanned(_Event):
    """Discovery's answer: candidates, skips, and the ids held for the whole run."""

    type: Literal["recovery-planned"] = "recovery-planned"
    candidates: list[dict[str, str]]  # {id, branch}
    skipped: list[dict[str, str]]  # {branch, reason, id?}
    held: list[str]
    enabled: bool
    mode: str
    blocked: str | None = None


class RecoveryAssessRequested(_TaskEvent):
    type: Literal["recovery-assess-requested"] = "recovery-assess-requested"
    branch: str


class RecoveryAssessed(_TaskEvent):
    type: Literal["recovery-assessed"] = "recovery-assessed"
    assessment: Assessment


class RecoveryDecided(_TaskEvent):
    """What recovery does with one candidate: report it, or resume it at `stage`."""

    type: Literal["recovery-decided"] = "recovery-decided"
    branch: str
    classification: str
    action: Literal["report", "resume"]
    reason: str = ""
    stage: str | None = None


class RecoveryResumed(_TaskEvent):
    type: Literal["recovery-resumed"] = "recovery-resumed"
    stage: str


class RecoveryUnresolved(_Event):
    """At the end: survivors still unresolved, and the halt they cause."""

    type: Literal["recovery-unresolved"] = "recovery-unresolved"
    unresolved: list[dict[str, str | None]]
    reason: str


class RunStopped(_Event):
    """Fan-out stops (failure, fault) or everything stops (auth, operator halt)."""

    type: Literal["run-stopped"] = "run-stopped"
    kind: Literal["failure", "provider", "infra", "auth", "operator"]
    reason: str


class StopLifted(_Event):
    type: Literal["stop-lifted"] = "stop-lifted"
    reason: str


class _Move(_Event):
    by: str
    reason: str


class TaskRetried(_Move):
    type: Literal["task-retried"] = "task-retried"
    task: str


class TaskRearmed(_Move):
    """Re-armed with overrides; `stage` is where it continues from its kept
    work (None: it starts again from plan)."""

    type: Literal["task-rearmed"] = "task-rearmed"
    task: str
    overrides: dict[str, Any] = Field(default_factory=dict)
    stage: str | None = None


class TaskRecovered(_Move):
    """Continue from the kept branch at `stage`, the one its ExecPlan's Status names."""

    type: Literal["task-recovered"] = "task-recovered"
    task: str
    stage: str


class StageCompletedManually(_Move):
    type: Literal["stage-completed-manually"] = "stage-completed-manually"
    task: str
    stage: str
    checks: list[Check] = Field(default_factory=list)


class TaskForceStarted(_Move):
    type: Literal["task-force-started"] = "task-force-started"
    task: str


class RunHalted(_Move):
    type: Literal["run-halted"] = "run-halted"


class RunResumed(_Move):
    type: Literal["run-resumed"] = "run-resumed"


class MoveRejected(_Move):
    type: Literal["move-rejected"] = "move-rejected"
    move: str
    task: str | None = None
    why: str


class RunEnded(_Event):
    type: Literal["run-ended"] = "run-ended"
    remediation: Literal["flushed", "suppressed", "none"] = "none"


Event = Annotated[
    RunStarted
    | TaskStarted
    | StageEntered
    | StageDispatched
    | AttemptJudged
    | StaleVerdictIgnored
    | FaultRecorded
    | GateCharged
    | GateJudgeDecided
    | JudgeRequested
    | TicketOpened
    | TicketClosed
    | TaskFailed
    | TaskDeferred
    | TaskParked
    | TaskReleased
    | TaskSuspended
    | IntegrationRequested
    | IntegrationRecorded
    | TaskLanded
    | TaskMergedByPerson
    | TaskManualMergeReady
    | AssessmentRequested
    | AssessmentRecorded
    | SalvageRequested
    | SalvageRecorded
    | RecoveryPlanned
    | RecoveryAssessRequested
    | RecoveryAssessed
    | RecoveryDecided
    | RecoveryResumed
    | RecoveryUnresolved
    | RunStopped
    | StopLifted
    | TaskRetried
    | TaskRearmed
    | TaskRecovered
    | StageCompletedManually
    | TaskForceStarted
    | RunHalted
    | RunResumed
    | MoveRejected
    | RunEnded,
    Field(discriminator="type"),
]

_ADAPTER: TypeAdapter[Event] = TypeAdapter(Event)
EVENT_VERSIONS: dict[str, frozenset[int]] = {
    cls.model_fields["type"].default: frozenset({1})
    for cls in _Event.__subclasses__() + _TaskEvent.__subclasses__() + _Move.__subclasses__()
    if "type" in cls.model_fields
}


def event_to_json(event: Event) -> dict[str, Any]:
    return event.model_dump(mode="json", by_alias=True)


def event_from_json(data: object) -> Event:
    """Read one stored event; unknown types and versions fail loudly."""
    if not isinstance(data, dict):
        raise ReplayError(f"event is not an object: {type(data).__name__}")
    kind = data.get("type")
    version = data.get("version")
    if kind not in EVENT_VERSIONS:
        raise ReplayError(f"unknown event type {kind!r}")
    if version not in EVENT_VERSIONS[kind]:
        raise ReplayError(f"unknown version {version!r} of event {kind!r}")
    try:
        return _ADAPTER.validate_python(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err["loc"][1:])
        raise ReplayError(
            f"event {kind!r} v{version} is malformed at {where}: {err['msg']}"
        ) from None
