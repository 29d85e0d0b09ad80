"""RECOVERY.md decision tables: table-driven rows plus hypothesis properties."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.core.recovery import (
    BranchEvidence,
    after_failure,
    continue_mode,
    plan_status,
    review_mode,
    salvage_decision,
    should_assess,
)

GOOD = BranchEvidence(commits=2, task_scoped=True, execplan="Status: COMPLETE\n")


@pytest.mark.parametrize(
    ("status", "fault", "kw", "expected"),
    [
        ("failed", None, {}, True),
        ("halted", None, {}, True),
        ("failed", "auth", {}, False),
        ("failed", "provider", {}, False),
        ("infra-fault", "infra", {}, False),
        ("failed", "worktree", {}, False),
        ("failed", None, {"dry_run": True}, False),
        ("failed", None, {"assess_enabled": False}, False),
        ("failed", None, {"branch_exists": False}, False),
        ("landed", None, {}, False),
        ("manual-merge-ready", None, {}, False),
    ],
    ids=[
        "failed",
        "halted",
        "auth",
        "provider",
        "infra",
        "worktree",
        "dry-run",
        "disabled",
        "no-branch",
        "landed",
        "manual-merge-ready",
    ],
)
def test_which_failures_are_assessed(status, fault, kw, expected):
    assert should_assess(status, fault=fault, **kw) is expected


@pytest.mark.parametrize(
    ("status", "stage", "fault", "kw", "expected"),
    [
        ("failed", "implement", None, {}, "assess"),
        ("failed", "implement", "auth", {}, None),
        ("infra-fault", "implement", "infra", {}, "salvage"),
        ("infra-fault", "integrate", "infra", {}, None),
        ("infra-fault", "implement", "infra", {"dry_run": True}, None),
        ("infra-fault", "implement", "infra", {"branch_exists": False}, None),
        ("failed", "implement", None, {"assess_enabled": False}, None),
        ("failed", "implement", None, {"dry_run": True}, None),
    ],
    ids=[
        "product-failure",
        "auth",
        "infra-salvaged",
        "infra-at-integrate",
        "infra-dry-run",
        "infra-no-branch",
        "disabled",
        "dry-run",
    ],
)
def test_what_follows_a_failure_uses_should_assess(status, stage, fault, kw, expected):
    args = {"assess_enabled": True, "dry_run": False, "branch_exists": True, **kw}
    assert after_failure(status, stage, fault=fault, **args) == expected


@pytest.mark.parametrize(
    ("cls", "kw", "runs"),
    [
        ("adopt-partial", {}, True),
        ("continue-manual", {}, True),
        ("infra-fault", {}, True),
        ("adopt-complete", {}, False),
        ("discard", {}, False),
        ("continue-manual", {"evidence_error": True}, False),
        ("adopt-partial", {"has_branch": False}, False),
        ("adopt-partial", {"assess_enabled": False}, False),
    ],
    ids=[
        "partial",
        "manual",
        "infra",
        "complete",
        "discard",
        "evidence-error",
        "no-branch",
        "disabled",
    ],
)
def test_salvage_eligibility(cls, kw, runs):
    args = {"assess_enabled": True, "evidence_error": False, "has_branch": True, **kw}
    ok, why = salvage_decision(cls, **args)
    assert ok is runs
    assert bool(why) is not runs


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ({"addendum": True, "clean": False}, "addendum-branch"),
        ({"collection_error": "git failed", "clean": False}, "evidence-collection-error"),
        ({"clean": False, "commits": 0}, "dirty-worktree"),
        ({"commits": 0, "task_scoped": False}, "no-committed-work"),
        ({"task_scoped": None}, "not-task-scoped"),
        ({"missing_evidence": ("gates",), "execplan": None}, "missing-validation-evidence"),
        ({"execplan": None}, "missing-execplan"),
    ],
    ids=lambda v: v if isinstance(v, str) else "",
)
def test_review_mode_first_failing_check_downgrades(change, reason):
    action = review_mode(
        "adopt-complete", replace(GOOD, **change), review_mode_on=True, dry_run=False
    )
    assert (action.action, action.classification, action.reason) == (
        "report",
        "continue-manual",
        reason,
    )


def test_review_mode_resumes_eligible_and_reports_dry_run():
    assert (
        review_mode("adopt-complete", GOOD, review_mode_on=True, dry_run=False).action == "resume"
    )
    dry = review_mode("adopt-complete", GOOD, review_mode_on=True, dry_run=True)
    assert (dry.action, dry.reason) == ("report", "dry-run")
    off = review_mode("adopt-complete", GOOD, review_mode_on=False, dry_run=False)
    assert (off.action, off.classification) == ("report", "adopt-complete")


@pytest.mark.parametrize(
    ("plan", "commits", "result"),
    [
        (None, 0, ("resume", "plan", "")),
        ("Status: DRAFT", 0, ("resume", "plan", "")),
        ("Status: Approved", 0, ("resume", "implement", "")),
        ("Status:   IN   PROGRESS", 1, ("resume", "implement", "")),
        ("Status: COMPLETE", 1, ("resume", "review", "")),
        ("Status: COMPLETE", 0, ("report", "review", "no-committed-work")),
        ("Status: BLOCKED", 1, ("report", None, "plan-blocked")),
        ("Status: shipping soon", 1, ("resume", "plan", "")),
    ],
    ids=[
        "missing",
        "draft",
        "approved",
        "in-progress",
        "complete",
        "complete-no-commits",
        "blocked",
        "unknown",
    ],
)
def test_continue_mode_dispatch(plan, commits, result):
    a = continue_mode(BranchEvidence(commits=commits, execplan=plan), dry_run=False)
    assert (a.action, a.stage, a.reason) == result


def test_continue_mode_reports_before_reading_the_plan():
    e = BranchEvidence(clean=False, execplan="Status: COMPLETE", commits=3)
    assert continue_mode(e, dry_run=False).reason == "dirty-worktree"
    u = BranchEvidence(execplan="", execplan_readable=False)
    assert continue_mode(u, dry_run=False).reason == "plan-unreadable"
    d = continue_mode(BranchEvidence(execplan="Status: APPROVED"), dry_run=True)
    assert (d.action, d.stage, d.reason) == ("report", "implement", "dry-run")


evidence = st.builds(
    BranchEvidence,
    addendum=st.booleans(),
    collection_error=st.none() | st.just("boom"),
    clean=st.booleans(),
    commits=st.integers(0, 3),
    task_scoped=st.none() | st.booleans(),
    missing_evidence=st.lists(st.sampled_from(["gates", "tests"]), max_size=2).map(tuple),
    execplan=st.none() | st.sampled_from(["Status: DRAFT", "Status: COMPLETE", "Status: BLOCKED"]),
)
classes = st.sampled_from(["adopt-complete", "adopt-partial", "continue-manual", "discard"])


@given(classes, evidence, st.booleans(), st.booleans())
def test_review_mode_never_upgrades_and_resumes_only_full_evidence(cls, e, on, dry):
    a = review_mode(cls, e, review_mode_on=on, dry_run=dry)
    if a.action == "resume":
        assert cls == "adopt-complete" and on and not dry
        assert e.clean and e.commits and e.task_scoped is True and not e.missing_evidence
        assert not e.addendum and e.collection_error is None and e.execplan is not None
    else:
        assert a.classification in (cls, "continue-manual")


@given(evidence, st.booleans())
def test_continue_mode_never_resumes_dirty_addendum_or_blocked(e, dry):
    a = continue_mode(e, dry_run=dry)
    if a.action == "resume":
        assert e.clean and not e.addendum and e.collection_error is None and not dry
        assert plan_status(e.execplan) != "blocked"


@given(st.text(max_size=60))
def test_plan_status_is_total(text):
    assert plan_status(text) in {
        "draft",
        "approved",
        "in progress",
        "blocked",
        "complete",
        "unknown",
    }
