"""What an assessment of a surviving branch says, and what salvage did.

Both are report-only records: an assessment never ticks, pushes, merges or
deletes; salvage commits ExecPlan files on the task branch and nothing else.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

Classification = Literal["adopt-complete", "adopt-partial", "continue-manual", "discard"]


class _Model(BaseModel):
    model_config = ConfigDict(
        alias_generator=to_camel, populate_by_name=True, extra="forbid", frozen=True
    )


class Assessment(_Model):
    """The read-only judgement of a branch, from host-collected evidence."""

    classification: Classification
    task_scoped: bool = False
    validation: list[str] = Field(default_factory=list)
    missing_evidence: list[str] = Field(default_factory=list)
    residual_risk: list[str] = Field(default_factory=list)
    rationale: str = ""
    evidence_error: str | None = None
    worktree: str | None = None


def unassessable(branch: str, error: str, risk: list[str]) -> Assessment:
    """The assessment when no evidence could be collected: nothing is adopted
    and a person decides (unknown evidence never qualifies a branch)."""
    return Assessment(
        classification="continue-manual",
        evidence_error=error,
        missing_evidence=["host evidence collection failed"],
        residual_risk=risk,
        rationale=f"could not collect evidence for {branch}: {error}",
    )


class SalvageResult(_Model):
    """`result.salvage` for one branch: `{classification, committed, skipped, sha, detail}`."""

    classification: str
    committed: list[str] = Field(default_factory=list)
    skipped: bool = False
    sha: str | None = None
    detail: str = ""
