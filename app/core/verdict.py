"""The verdict a stage attempt produces: one definition for runner and core.

The runner (`actions/`) writes it as `verdict.json`; the core reads it back as
evidence. A stage passes only on its completion marker, bound to the attempt's
random token; the exit code is a second check recorded beside it.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

StageName = Literal["plan", "design-review", "implement", "gates", "review", "fix", "assess"]
AGENT_STAGES: tuple[str, ...] = ("plan", "design-review", "implement", "review", "fix", "assess")
WRITE_STAGES: frozenset[str] = frozenset({"plan", "implement", "fix"})

CheckStatus = Literal["passed", "failed", "skipped"]

# Why an attempt died without evidence about the branch: an infrastructure fault
# (seed 000: the process died, hit its deadline, or could not be cleaned up,
# spawned or pushed). The core retries these in place up to `stageAttempts` and
# never assesses them. An agent that exits non-zero on its own (exit 3, say)
# without its marker is a product failure: `fault` stays None.
InfraFault = Literal["timeout", "cleanup-failed", "spawn-failed", "crash", "push-failed", "runner"]
Classification = Literal["adopt-complete", "adopt-partial", "continue-manual", "discard"]

_TOKEN_RE = re.compile(r"^[A-Za-z0-9_-]{8,128}$")

# Exit statuses recorded for deadline handling (seed 004): 124 is a timeout,
# 125 means the process tree could not be cleaned up after one.
EXIT_TIMEOUT = 124
EXIT_CLEANUP_FAILED = 125


MARKER_WORD = "ODW-STAGE-COMPLETE"


def completion_marker(token: str) -> str:
    """The line an agent prints when done, alone on its line; embeds the attempt's token."""
    return f"{MARKER_WORD} {token}"


def valid_token(token: str) -> bool:
    return bool(_TOKEN_RE.match(token))


class _Model(BaseModel):
    model_config = ConfigDict(
        alias_generator=to_camel, populate_by_name=True, extra="forbid", frozen=True
    )


class Check(_Model):
    """One piece of evidence behind a verdict."""

    name: str
    status: CheckStatus
    reason: str = ""
    code: int | None = None


class GateResult(_Model):
    """A configured gate command run by the runner, never by the agent."""

    command: str
    code: int | None
    status: CheckStatus
    tail: str = ""
    duration: float = 0.0


class RejectedPath(_Model):
    path: str
    reason: str


class SalvageBundle(_Model):
    """ExecPlan files collected from a failed write stage, with rejections named."""

    files: list[str] = Field(default_factory=list)
    rejected: list[RejectedPath] = Field(default_factory=list)


class Finding(_Model):
    summary: str
    path: str | None = None
    line: int | None = None


class ReviewReport(_Model):
    """What a deciding stage writes to ODW_REPORT_FILE."""

    model_config = ConfigDict(extra="ignore", frozen=True)
    decision: Literal["approve", "changes"]
    findings: list[Finding] = Field(default_factory=list)


class AssessmentReport(_Model):
    """What the `assess` stage writes to ODW_REPORT_FILE: a read-only judgement."""

    model_config = ConfigDict(extra="ignore", frozen=True)
    classification: Classification
    summary: str = ""
    missing_evidence: list[str] = Field(default_factory=list)
    residual_risk: list[str] = Field(default_factory=list)


class Verdict(_Model):
    """Everything the host needs to judge one stage attempt."""

    stage: StageName
    task: str
    token: str
    passed: bool
    checks: list[Check]
    gates: list[GateResult] = Field(default_factory=list)
    branch: str | None = None
    head_before: str | None = None
    head_after: str | None = None
    commits: list[str] = Field(default_factory=list)
    dirty: bool = False
    salvage: SalvageBundle = Field(default_factory=SalvageBundle)
    report: ReviewReport | None = None
    assessment: AssessmentReport | None = None
    fault: InfraFault | None = None
    exit_code: int | None = None
    deadline: float | None = None
    output_bytes: int = 0
    timings: dict[str, float] = Field(default_factory=dict)
    output_tail: str = ""

    def check(self, name: str) -> Check | None:
        return next((c for c in self.checks if c.name == name), None)
