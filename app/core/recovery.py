"""The recovery decision tables (guide RECOVERY.md) as plain functions.

Which failures are assessed, when salvage runs, what review-mode and
continue-mode resume do with a surviving branch, and how an ExecPlan's
`Status:` line reads. First failing check wins everywhere; missing evidence
downgrades, never upgrades, and evidence nobody collected counts against
resuming (an unknown worktree state is not clean).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Literal

PlanStatus = Literal[
    "draft", "approved", "in progress", "blocked", "complete", "unknown", "missing"
]
SALVAGE_CLASSES = frozenset({"adopt-partial", "continue-manual", "infra-fault"})
_STATUS_LINE = re.compile(r"^\s*Status:\s*(?P<words>.*)$", re.IGNORECASE | re.MULTILINE)
_KNOWN: dict[str, PlanStatus] = {
    "draft": "draft",
    "approved": "approved",
    "in progress": "in progress",
    "blocked": "blocked",
    "complete": "complete",
}


def should_assess(
    status: str,
    *,
    fault: str | None = None,
    assess_enabled: bool = True,
    dry_run: bool = False,
    branch_exists: bool = True,
) -> bool:
    """A failed or halted task with a branch is assessed, unless a rule excludes it.

    Excluded: assessment switched off, dry runs, auth and provider faults, infra
    faults, branch or worktree creation failures, and anything that did not fail
    (landed, manual-merge-ready, pending...).
    """
    if not assess_enabled or dry_run or not branch_exists:
        return False
    if fault in ("auth", "provider", "infra", "worktree"):
        return False
    return status in ("failed", "halted")


def after_failure(
    status: str,
    stage: str,
    *,
    fault: str | None,
    assess_enabled: bool,
    dry_run: bool,
    branch_exists: bool,
) -> Literal["assess", "salvage"] | None:
    """What follows a task's failure: an assessment, infra-fault salvage, or nothing.

    An infra fault is never assessed; its branch is salvaged instead, except at
    integration (nothing of the agent's is left to save) and in dry runs.
    """
    if should_assess(
        status,
        fault=fault,
        assess_enabled=assess_enabled,
        dry_run=dry_run,
        branch_exists=branch_exists,
    ):
        return "assess"
    if fault == "infra" and stage != "integrate" and assess_enabled and not dry_run:
        return "salvage" if branch_exists else None
    return None


def salvage_decision(
    classification: str, *, assess_enabled: bool, evidence_error: bool, has_branch: bool
) -> tuple[bool, str]:
    """(run salvage?, why not) after an assessment or an infra fault."""
    if not assess_enabled:
        return False, "assessPartialBranches is off"
    if classification not in SALVAGE_CLASSES:
        why = {
            "adopt-complete": "adopt-complete continues through the ordinary path",
            "discard": "discarded branches are not salvaged",
        }.get(classification, f"nothing to salvage for {classification}")
        return False, why
    if evidence_error and classification == "continue-manual":
        return False, "evidence collection failed; the branch state is untrustworthy"
    if not has_branch:
        return False, "no branch or worktree recorded"
    return True, ""


@dataclass(frozen=True)
class BranchEvidence:
    """What the host collected about a surviving branch (never the agent's word)."""

    addendum: bool = False
    collection_error: str | None = None
    clean: bool | None = None  # None: not collected, which is not clean
    commits: int = 0
    task_scoped: bool | None = None
    missing_evidence: tuple[str, ...] = ()
    execplan: str | None = None  # committed ExecPlan text, None when absent
    execplan_readable: bool = True


@dataclass(frozen=True)
class ResumeAction:
    action: Literal["report", "resume"]
    classification: str
    reason: str = ""
    stage: str | None = None


def review_mode(
    classification: str, evidence: BranchEvidence, *, review_mode_on: bool, dry_run: bool
) -> ResumeAction:
    """Review-mode resume: only an adopt-complete with full evidence re-enters review."""
    if not review_mode_on or classification != "adopt-complete":
        return ResumeAction("report", classification)
    reason = _review_blocker(evidence)
    if reason is not None:
        return ResumeAction("report", "continue-manual", reason)
    if dry_run:
        return ResumeAction("report", classification, "dry-run", "review")
    return ResumeAction("resume", classification, "", "review")


def review_preview(evidence: BranchEvidence) -> ResumeAction:
    """A dry run in review mode: classify from host evidence alone, never resume.

    Nothing is assessed (an assessment is not read-only enough for a dry run),
    so only the checks host evidence can settle apply; task scope the host did
    not deny is left to the assessment a real run would make.
    """
    e = replace(evidence, task_scoped=evidence.task_scoped is not False)
    reason = _review_blocker(e)
    if reason is not None:
        return ResumeAction("report", "not-assessed", reason)
    return ResumeAction("report", "not-assessed", "dry-run", "review")


def _review_blocker(e: BranchEvidence) -> str | None:
    if e.addendum:
        return "addendum-branch"
    if e.collection_error:
        return "evidence-collection-error"
    if e.clean is not True:
        return "dirty-worktree"
    if e.commits == 0:
        return "no-committed-work"
    if e.task_scoped is not True:
        return "not-task-scoped"
    if e.missing_evidence:
        return "missing-validation-evidence"
    if e.execplan is None:
        return "missing-execplan"
    return None


def continue_mode(evidence: BranchEvidence, *, dry_run: bool) -> ResumeAction:
    """Continue-mode resume: no judge; the committed ExecPlan's status picks the stage."""
    e = evidence
    if e.addendum:
        return ResumeAction("report", "continue-manual", "addendum-branch")
    if e.collection_error:
        return ResumeAction("report", "continue-manual", "evidence-collection-error")
    if e.clean is not True:
        return ResumeAction("report", "continue-manual", "dirty-worktree")
    if not e.execplan_readable:
        return ResumeAction("report", "continue-manual", "plan-unreadable")
    status = plan_status(e.execplan)
    if status == "blocked":
        return ResumeAction("report", "continue-manual", "plan-blocked")
    stage = stage_for_status(status)
    if stage == "review" and e.commits == 0:
        return ResumeAction("report", "continue-manual", "no-committed-work", stage)
    if dry_run:
        return ResumeAction("report", "continue-manual", "dry-run", stage)
    return ResumeAction("resume", "continue-manual", "", stage)


def stage_for_status(status: PlanStatus) -> str:
    if status in ("approved", "in progress"):
        return "implement"
    if status == "complete":
        return "review"
    return "plan"


def plan_status(text: str | None) -> PlanStatus:
    """The first `Status:` line, lower-cased with spaces collapsed."""
    if text is None:
        return "missing"
    m = _STATUS_LINE.search(text)
    if m is None:
        return "unknown"
    words = " ".join(m.group("words").lower().split())
    return _KNOWN.get(words, "unknown")
