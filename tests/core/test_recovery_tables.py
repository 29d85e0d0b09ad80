"""RECOVERY.md decision tables: table-driven rows plus hypothesis properties."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from actions.checks import fault_of
from actions.proctree import ProcessResult
from app.core.judging import judge
from app.core.recovery import (
    BranchEvidence,
    ResumeAction,
    after_failure,
    continue_mode,
    plan_status,
    review_mode,
    review_preview,
    salvage_decision,
    should_assess,
)
from app.core.verdict import Check, Verdict

TOKEN = "attempt-token-1"
GOOD = BranchEvidence(clean=True, commits=2, task_scoped=True, execplan="Status: COMPLETE\n")


@pytest.mark.parametrize(
    ("status", "fault", "kw", "expected"),
    [
        ("failed", None, {}, True),
        ("halted", None, {}, True),
        ("failed", "auth", {}, False),
        ("failed", "provider", {}, False),
        ("infra-fault", "infra", {}, False),
        ("failed", "worktree", {}, False),
        ("failed", "infra", {}, False),
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
        "infra-on-a-failed-task",
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
        ("failed", "implement", None, {"branch_exists": False}, None),
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
        "no-branch",
    ],
)
def test_what_follows_a_failure_uses_should_assess(status, stage, fault, kw, expected):
    args = {"assess_enabled": True, "dry_run": False, "branch_exists": True, **kw}
    assert after_failure(status, stage, fault=fault, **args) == expected


@pytest.mark.parametrize(
    ("cls", "kw", "why"),
    [
        ("adopt-partial", {}, ""),
        ("continue-manual", {}, ""),
        ("infra-fault", {}, ""),
        ("adopt-complete", {}, "adopt-complete continues through the ordinary path"),
        ("discard", {}, "discarded branches are not salvaged"),
        (
            "continue-manual",
            {"evidence_error": True},
            "evidence collection failed; the branch state is untrustworthy",
        ),
        ("adopt-partial", {"has_branch": False}, "no branch or worktree recorded"),
        ("adopt-partial", {"assess_enabled": False}, "assessPartialBranches is off"),
        ("not-assessed", {}, "nothing to salvage for not-assessed"),
        ("adopt-partial", {"evidence_error": True}, ""),
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
        "unknown-class",
        "partial-despite-evidence-error",
    ],
)
def test_salvage_eligibility(cls, kw, why):
    args = {"assess_enabled": True, "evidence_error": False, "has_branch": True, **kw}
    assert salvage_decision(cls, **args) == (not why, why)


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ({"addendum": True, "clean": False}, "addendum-branch"),
        ({"collection_error": "git failed", "clean": False}, "evidence-collection-error"),
        ({"clean": False, "commits": 0}, "dirty-worktree"),
        ({"clean": None, "commits": 0}, "dirty-worktree"),  # issue 12.6: unknown is dirty
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
    assert dry == ResumeAction("report", "adopt-complete", "dry-run", "review")
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
    a = continue_mode(BranchEvidence(clean=True, commits=commits, execplan=plan), dry_run=False)
    action, stage, reason = result
    assert a == ResumeAction(action, "continue-manual", reason, stage)


@pytest.mark.parametrize(
    ("evidence", "reason"),
    [
        (BranchEvidence(addendum=True, clean=True), "addendum-branch"),
        (BranchEvidence(collection_error="git failed", clean=True), "evidence-collection-error"),
        (BranchEvidence(clean=False), "dirty-worktree"),
        (BranchEvidence(clean=True, execplan_readable=False), "plan-unreadable"),
        (BranchEvidence(clean=True, execplan="Status: BLOCKED"), "plan-blocked"),
    ],
    ids=["addendum", "collection-error", "dirty", "unreadable", "blocked"],
)
def test_continue_mode_reports_each_blocker_as_continue_manual_with_no_stage(evidence, reason):
    assert continue_mode(evidence, dry_run=False) == ResumeAction(
        "report", "continue-manual", reason
    )


def test_continue_mode_in_a_dry_run_reports_the_stage_it_would_resume() -> None:
    e = BranchEvidence(clean=True, commits=1, execplan="Status: APPROVED")
    assert continue_mode(e, dry_run=True) == ResumeAction(
        "report", "continue-manual", "dry-run", "implement"
    )


@pytest.mark.parametrize(
    ("evidence", "reason"),
    [
        (BranchEvidence(clean=True, execplan=None, execplan_readable=False), "plan-unreadable"),
        (BranchEvidence(clean=None, execplan="Status: APPROVED"), "dirty-worktree"),
    ],
    ids=["unreadable-plan-without-text", "worktree-state-unknown"],
)
def test_continue_mode_fails_closed_on_unknown_evidence(evidence, reason):
    """Issue 12 items 5 and 6: what could not be read or collected never resumes."""
    a = continue_mode(evidence, dry_run=False)
    assert (a.action, a.reason) == ("report", reason)


@pytest.mark.parametrize(
    ("change", "result"),
    [
        ({}, ("report", "not-assessed", "dry-run", "review")),
        ({"task_scoped": None}, ("report", "not-assessed", "dry-run", "review")),
        ({"clean": None}, ("report", "not-assessed", "dirty-worktree", None)),
        ({"task_scoped": False}, ("report", "not-assessed", "not-task-scoped", None)),
        ({"commits": 0}, ("report", "not-assessed", "no-committed-work", None)),
        ({"execplan": None}, ("report", "not-assessed", "missing-execplan", None)),
    ],
    ids=[
        "would-assess",
        "scope-left-to-assessment",
        "unknown-worktree",
        "out-of-scope",
        "no-commits",
        "no-execplan",
    ],
)
def test_review_mode_dry_run_classifies_from_host_evidence_and_never_resumes(change, result):
    """Issue 12 item 8: read-only, reports what recovery would do, never resumes."""
    a = review_preview(replace(GOOD, **change))
    assert (a.action, a.classification, a.reason, a.stage) == result


def test_continue_mode_reports_before_reading_the_plan():
    e = BranchEvidence(clean=False, execplan="Status: COMPLETE", commits=3)
    assert continue_mode(e, dry_run=False).reason == "dirty-worktree"
    u = BranchEvidence(clean=True, execplan="", execplan_readable=False)
    assert continue_mode(u, dry_run=False).reason == "plan-unreadable"
    d = continue_mode(BranchEvidence(clean=True, execplan="Status: APPROVED"), dry_run=True)
    assert (d.action, d.stage, d.reason) == ("report", "implement", "dry-run")


evidence = st.builds(
    BranchEvidence,
    addendum=st.booleans(),
    collection_error=st.none() | st.just("boom"),
    clean=st.none() | st.booleans(),
    commits=st.integers(0, 3),
    task_scoped=st.none() | st.booleans(),
    missing_evidence=st.lists(st.sampled_from(["gates", "tests"]), max_size=2).map(tuple),
    execplan=st.none() | st.sampled_from(["Status: DRAFT", "Status: COMPLETE", "Status: BLOCKED"]),
    execplan_readable=st.booleans(),
)
classes = st.sampled_from(["adopt-complete", "adopt-partial", "continue-manual", "discard"])


@given(classes, evidence, st.booleans(), st.booleans())
def test_review_mode_never_upgrades_and_resumes_only_full_evidence(cls, e, on, dry):
    a = review_mode(cls, e, review_mode_on=on, dry_run=dry)
    if a.action == "resume":
        assert cls == "adopt-complete" and on and not dry
        assert e.clean is True and e.commits and e.task_scoped is True
        assert not e.missing_evidence
        assert not e.addendum and e.collection_error is None and e.execplan is not None
    else:
        assert a.classification in (cls, "continue-manual")


@given(evidence, st.booleans())
def test_continue_mode_never_resumes_dirty_addendum_or_blocked(e, dry):
    a = continue_mode(e, dry_run=dry)
    if a.action == "resume":
        assert e.clean is True and not e.addendum and e.collection_error is None and not dry
        assert e.execplan_readable
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


@pytest.mark.parametrize(
    ("exit_code", "sig", "marker", "fault", "outcome"),
    [
        (3, None, False, None, "failed"),
        (1, None, False, None, "failed"),
        (0, None, False, None, "failed"),
        (137, 9, False, "crash", "infra"),
        (143, None, False, "crash", "infra"),
        (124, None, False, "timeout", "infra"),
        (127, None, False, "spawn-failed", "infra"),
        (3, None, True, None, "passed"),
    ],
    ids=[
        "exit-3",
        "exit-1",
        "exit-0-no-marker",
        "killed",
        "died-143",
        "deadline",
        "not-found",
        "marker-seen",
    ],
)
def test_one_vocabulary_a_product_failure_is_not_a_fault(exit_code, sig, marker, fault, outcome):
    """Issue 12 item 10: only a process that died is an infra fault (retried)."""
    result = ProcessResult(exit_code=exit_code, signal=sig, timed_out=exit_code == 124)
    assert fault_of(result, marker_seen=marker) == fault
    verdict = Verdict(
        stage="implement",
        task="1.1.1",
        token=TOKEN,
        passed=marker,
        checks=[
            Check(name="completion_marker", status="passed" if marker else "failed"),
            Check(name="exit_code", status="failed", code=exit_code),
        ],
        fault=fault,
    )
    assert judge("implement", TOKEN, verdict, None).outcome == outcome


def test_a_missing_plan_and_a_plan_without_a_status_line_read_apart() -> None:
    assert plan_status(None) == "missing"
    assert plan_status("# Plan\n\nno status here\n") == "unknown"
    assert plan_status("Status:  In   Progress\n") == "in progress"
