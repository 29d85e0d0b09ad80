"""What the outside world tells the core: one typed input per happening.

Every input carries `at`, the time the caller observed it; the core never reads
a clock. Results of effects come back as inputs, keyed by task (and token for
stage attempts) so late or duplicate answers can be recognised.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from app.core.assessment import Assessment, SalvageResult
from app.core.config import RunConfig
from app.core.discovery import Survivor, SurvivorEvidence
from app.core.integration_schema import Report
from app.core.judging import Fault
from app.core.preflight import Preflight
from app.core.verdict import Verdict

MoveName = Literal["retry", "recover", "rearm", "complete", "force-start", "halt", "resume"]
JudgeDecision = Literal["continue", "recover", "fail"]


class _Input(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    at: datetime


class StartRun(_Input):
    kind: Literal["start-run"] = "start-run"
    run_id: str
    base: str = "main"
    roadmap: str
    config: RunConfig = Field(default_factory=RunConfig)
    held: list[str] = Field(default_factory=list)
    # `roadmap-*` branches found on origin at launch, with host evidence.
    survivors: list[Survivor] = Field(default_factory=list)
    # The host's auth preflight; anything missing stops the run before any dispatch.
    preflight: Preflight | None = None


class StageFinished(_Input):
    """A stage attempt ended: a verdict, or a fault when there is none."""

    kind: Literal["stage-finished"] = "stage-finished"
    task: str
    stage: str
    token: str
    verdict: Verdict | None = None
    fault: Fault | None = None


class IntegrationFinished(_Input):
    kind: Literal["integration-finished"] = "integration-finished"
    task: str
    report: Report | None = None
    fault: str | None = None


class AssessmentFinished(_Input):
    kind: Literal["assessment-finished"] = "assessment-finished"
    task: str
    assessment: Assessment


class SalvageFinished(_Input):
    kind: Literal["salvage-finished"] = "salvage-finished"
    task: str
    salvage: SalvageResult


class GateJudged(_Input):
    kind: Literal["gate-judged"] = "gate-judged"
    task: str
    stage: str
    gate: str
    decision: JudgeDecision
    by: str = "judge"


class OperatorMove(_Input):
    """retry, recover, rearm, complete, force-start, halt, resume: who asked and why.

    `evidence` is what the host read of the task's kept branch (for `recover`
    and `rearm`, which continue from it); None when it was not read.
    """

    kind: Literal["operator-move"] = "operator-move"
    move: MoveName
    task: str | None = None
    by: str
    reason: str = ""
    overrides: dict[str, Any] = Field(default_factory=dict)
    evidence: SurvivorEvidence | None = None


class PullClosed(_Input):
    """A person merged or closed a task's pull request on the forge (App mode).

    Merged counts as landed at `sha`; closed unmerged stops that task.
    """

    kind: Literal["pull-closed"] = "pull-closed"
    task: str
    number: int
    merged: bool
    sha: str | None = None
    by: str


class EndRun(_Input):
    kind: Literal["end-run"] = "end-run"


Input = (
    StartRun
    | StageFinished
    | IntegrationFinished
    | AssessmentFinished
    | SalvageFinished
    | GateJudged
    | OperatorMove
    | PullClosed
    | EndRun
)
