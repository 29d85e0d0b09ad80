"""Fresh-launch discovery: which surviving `roadmap-*` branches are recovery candidates.

The host lists the task branches it finds on origin, with the git evidence it
collected for each (`Survivor`); this module maps them back to roadmap units
and skips the rest with a machine-readable reason, in the guide's order:
`unmapped-branch`, `already-complete`, `unreadable-commit`, then
`not-resume-task` (`resumeTaskId` narrows) and `candidate-cap` after sorting
by roadmap line, then branch name. `missing-worktree` never applies here: a
resume starts from origin's branch, not from a kept worktree.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

from app.core.assessment import Assessment
from app.core.naming import task_id_from_branch
from app.core.recovery import BranchEvidence
from app.core.roadmap import Roadmap


class _Model(BaseModel):
    model_config = ConfigDict(
        alias_generator=to_camel, populate_by_name=True, extra="forbid", frozen=True
    )


class SurvivorEvidence(_Model):
    """Host-collected facts about a surviving branch; never the agent's word."""

    collection_error: str | None = None
    clean: bool | None = None  # None: not collected, which counts as dirty
    commits: int = Field(default=0, ge=0)
    task_scoped: bool | None = None
    execplan: str | None = None  # the committed ExecPlan text, None when absent
    execplan_readable: bool = True
    # Gate results the host recorded for exactly this head: the only validation
    # evidence there is (an assessment's own `validation` list never counts).
    validation: list[str] = Field(default_factory=list)


class Survivor(_Model):
    """A `roadmap-*` branch found on origin when the run launched."""

    branch: str
    head: str | None = None
    readable: bool = True  # False when the head commit could not be read
    evidence: SurvivorEvidence = Field(default_factory=SurvivorEvidence)


@dataclass(frozen=True)
class Found:
    id: str
    branch: str
    line: int


@dataclass(frozen=True)
class Skip:
    branch: str
    reason: str
    id: str | None = None

    def to_json(self) -> dict[str, str]:
        out = {"branch": self.branch, "reason": self.reason}
        if self.id is not None:
            out["id"] = self.id
        return out


@dataclass(frozen=True)
class Discovery:
    candidates: tuple[Found, ...]
    skipped: tuple[Skip, ...]
    held: tuple[str, ...]  # open unit ids a surviving branch holds, for the whole run


def map_branch(roadmap: Roadmap, branch: str) -> tuple[str | None, str | None, int]:
    """(unit id, skip reason, roadmap line) for one branch name."""
    parsed = task_id_from_branch(branch)
    if parsed is None:
        return None, "unmapped-branch", 0
    task_id, addendum = parsed
    task = roadmap.get(task_id)
    if task is None or task.is_addendum:
        return None, "unmapped-branch", 0
    if not addendum:
        return (task_id, "already-complete", task.line) if task.done else (task_id, None, task.line)
    if not task.done:
        return None, "unmapped-branch", 0  # no addendum unit until the parent is ticked
    open_addenda = [a for a in roadmap.addenda(task_id) if not a.done]
    if not open_addenda:
        return task_id, "already-complete", task.line
    return task_id, None, open_addenda[0].line


def discover(
    roadmap: Roadmap,
    survivors: Sequence[Survivor],
    *,
    resume_task_id: str | None,
    max_candidates: int,
) -> Discovery:
    skipped: list[Skip] = []
    held: list[str] = []
    mapped: list[Found] = []
    for s in sorted(survivors, key=lambda s: s.branch):
        task_id, reason, line = map_branch(roadmap, s.branch)
        if reason is not None:
            skipped.append(Skip(s.branch, reason, task_id))
            continue
        assert task_id is not None
        held.append(task_id)
        if not s.readable:
            skipped.append(Skip(s.branch, "unreadable-commit", task_id))
            continue
        mapped.append(Found(task_id, s.branch, line))
    mapped.sort(key=lambda f: (f.line, f.branch))
    candidates: list[Found] = []
    for f in mapped:
        if resume_task_id is not None and f.id != resume_task_id:
            skipped.append(Skip(f.branch, "not-resume-task", f.id))
        elif len(candidates) >= max_candidates:
            skipped.append(Skip(f.branch, "candidate-cap", f.id))
        else:
            candidates.append(f)
    return Discovery(tuple(candidates), tuple(skipped), tuple(dict.fromkeys(held)))


def branch_evidence(
    branch: str, evidence: SurvivorEvidence, assessment: Assessment | None = None
) -> BranchEvidence:
    """The decision tables' evidence: host facts, narrowed (never widened) by an assessment.

    Agent-reported fields may only disqualify: task scope must be affirmed by
    the assessment and not denied by the host, the assessment's missing
    evidence blocks, and validation counts only when the host recorded it.
    """
    missing: list[str] = []
    scoped = evidence.task_scoped
    if assessment is not None:
        missing.extend(assessment.missing_evidence)
        scoped = assessment.task_scoped and evidence.task_scoped is not False
    if not evidence.validation:
        missing.append("no validation evidence recorded by the host for the branch head")
    error = evidence.collection_error or (assessment.evidence_error if assessment else None)
    return BranchEvidence(
        addendum=branch.endswith("-addendum"),
        collection_error=error,
        clean=evidence.clean,
        commits=evidence.commits,
        task_scoped=scoped,
        missing_evidence=tuple(missing),
        execplan=evidence.execplan,
        execplan_readable=evidence.execplan_readable,
    )
