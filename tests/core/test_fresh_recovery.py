"""Fresh-launch recovery: given survivors on origin, when the run starts and ends, then...

Discovery skips, each resume mode, dry runs, and the rule that an unresolved
survivor halts the run with needs-operator-recovery instead of a clean stop.
"""

from __future__ import annotations

from typing import Any

import pytest

from app.core.assessment import Assessment
from app.core.discovery import Survivor, SurvivorEvidence, discover, map_branch
from app.core.effects import Assess, DispatchStage, Integrate
from app.core.inputs import AssessmentFinished, EndRun, IntegrationFinished
from app.core.integration import IntegrationReport
from app.core.outstanding import outstanding
from app.core.result import run_result
from app.core.roadmap_parse import parse_roadmap
from app.core.state import fold
from tests.core.runkit import AT, Run, of

ROADMAP = (
    "## 1. Work\n"
    "- [x] 1.1. Done already\n"
    "  - [ ] 1.1.1. Open addendum\n"
    "- [ ] 1.2. Second\n"
    "- [ ] 1.3. Third. Requires 1.2.\n"
    "- [ ] 1.4. Fourth\n"
    "- [x] 1.5. Finished\n"
    "- [ ] 1.6. Sixth\n"
)
GOOD = SurvivorEvidence(
    clean=True,
    commits=3,
    task_scoped=True,
    execplan="Status: COMPLETE\n",
    validation=["make test ok"],
)


def survivor(branch: str, **evidence: Any) -> Survivor:
    return Survivor(branch=branch, head="0" * 40, evidence=GOOD.model_copy(update=evidence))


def skip_reasons(found: Any) -> dict[str, str]:
    return {k.branch: k.reason for k in found.skipped}


def test_discovery_maps_branches_and_skips_in_order() -> None:
    survivors = [
        Survivor(branch="feature-x"),
        Survivor(branch="roadmap-9-9"),
        Survivor(branch="roadmap-1-1-1"),  # an addendum id on a normal branch
        Survivor(branch="roadmap-1-2-addendum"),  # parent not ticked
        Survivor(branch="roadmap-1-5"),
        Survivor(branch="roadmap-1-4", readable=False),
        Survivor(branch="roadmap-1-6"),
        Survivor(branch="roadmap-1-2"),
        Survivor(branch="roadmap-1-1-addendum"),
    ]
    found = discover(parse_roadmap(ROADMAP), survivors, resume_task_id=None, max_candidates=2)
    assert skip_reasons(found) == {
        "feature-x": "unmapped-branch",
        "roadmap-9-9": "unmapped-branch",
        "roadmap-1-1-1": "unmapped-branch",
        "roadmap-1-2-addendum": "unmapped-branch",
        "roadmap-1-5": "already-complete",
        "roadmap-1-4": "unreadable-commit",
        "roadmap-1-6": "candidate-cap",
    }
    # Sorted by roadmap line: the addendum unit (line of 1.1.1) before 1.2; 1.6 capped.
    assert [(c.id, c.branch) for c in found.candidates] == [
        ("1.1", "roadmap-1-1-addendum"),
        ("1.2", "roadmap-1-2"),
    ]
    # Every open unit with a surviving branch is held, even when skipped.
    assert set(found.held) == {"1.1", "1.2", "1.4", "1.6"}


@pytest.mark.parametrize(
    ("branch", "mapped"),
    [
        ("roadmap-1-5-addendum", ("1.5", "already-complete")),
        ("roadmap-1-2-addendum", (None, "unmapped-branch")),
        ("roadmap-1-1-addendum", ("1.1", None)),
        ("roadmap-1-5", ("1.5", "already-complete")),
    ],
    ids=[
        "addendum-of-ticked-parent-without-addenda",
        "addendum-of-open-parent",
        "addendum-with-open-addenda",
        "ticked-task",
    ],
)
def test_addendum_branches_map_like_their_parent(branch: str, mapped: tuple[Any, Any]) -> None:
    """Issue 12 item 7: a ticked parent with no open addenda is already complete."""
    task_id, reason, _ = map_branch(parse_roadmap(ROADMAP), branch)
    assert (task_id, reason) == mapped


def test_resume_task_id_narrows_before_the_cap() -> None:
    survivors = [Survivor(branch=b) for b in ("roadmap-1-2", "roadmap-1-4", "roadmap-1-6")]
    found = discover(parse_roadmap(ROADMAP), survivors, resume_task_id="1.6", max_candidates=1)
    assert [c.id for c in found.candidates] == ["1.6"]
    assert skip_reasons(found) == {
        "roadmap-1-2": "not-resume-task",
        "roadmap-1-4": "not-resume-task",
    }


def test_a_fully_ticked_addendum_branch_is_already_complete() -> None:
    roadmap = "## 1. W\n- [x] 1.1. Done\n  - [x] 1.1.1. Also done\n- [ ] 1.2. Open\n"
    found = discover(
        parse_roadmap(roadmap),
        [Survivor(branch="roadmap-1-1-addendum")],
        resume_task_id=None,
        max_candidates=4,
    )
    assert skip_reasons(found) == {"roadmap-1-1-addendum": "already-complete"}
    assert found.held == ()


# -- the run ------------------------------------------------------------------


def finish_run(run: Run) -> dict[str, Any]:
    run.feed(EndRun(at=AT))
    return run_result(run.state)


def assess(run: Run, task: str, classification: str, **kw: Any) -> None:
    a = Assessment(classification=classification, **kw)  # type: ignore[arg-type]
    run.feed(AssessmentFinished(at=AT, task=task, assessment=a))


def land(run: Run, task: str) -> None:
    run.drive_to(task, "review")
    run.finish_stage(task)
    (request,) = [e for e in run.last[1] if isinstance(e, Integrate)]
    report = IntegrationReport(
        ok=True,
        rebased=True,
        squash_merged=True,
        pushed=True,
        roadmap_marked_done=True,
        sha="f" * 40,
    )
    run.feed(IntegrationFinished(at=AT, task=request.task, report=report))


def test_held_survivors_halt_the_run_even_when_recovery_is_off() -> None:
    run = Run(ROADMAP, survivors=[survivor("roadmap-1-2")])
    assert run.status("1.2") == "pending"
    assert not any(d.task == "1.2" for d in run.dispatched.values())
    for task in ("1.4", "1.6", "1.1"):
        while run.status(task) == "running":
            land(run, task)
    result = finish_run(run)
    assert sorted(result["processed"]) == ["1.1", "1.4", "1.6"]
    assert result["halted"].startswith("needs-operator-recovery: 1 surviving branch(es)")
    assert "1.2 (roadmap-1-2" in result["halted"]
    assert "resumePartialBranches=true" in result["halted"]
    assert "clean stop" not in result["summary"]
    rec = result["recovery"]
    assert (rec["candidates"], rec["assessed"], rec["resumed"]) == (1, 0, 0)
    assert rec["unresolved"] == [
        {
            "id": "1.2",
            "branch": "roadmap-1-2",
            "classification": None,
            "action": "hold",
            "reason": "resumePartialBranches is off: the branch was held, not assessed",
        }
    ]
    assert result_of(result, "1.3")["detail"] == "waiting for 1.2"


def result_of(result: dict[str, Any], task: str) -> dict[str, Any]:
    return next(r for r in result["results"] if r["id"] == task)


def test_no_survivors_means_no_recovery_object_and_a_clean_stop() -> None:
    run = Run(ROADMAP, resumePartialBranches=True, maxParallel=1)
    run.move("halt")
    result = finish_run(run)
    assert result["recovery"] is None


def test_assess_mode_reports_only_and_leaves_processed_unchanged() -> None:
    run = Run(
        ROADMAP,
        survivors=[survivor("roadmap-1-2"), survivor("roadmap-1-4")],
        resumePartialBranches=True,
        maxParallel=1,
    )
    asks = of(Assess, run.effects)
    assert [(a.task, a.branch, a.stage) for a in asks] == [
        ("1.2", "roadmap-1-2", "recovery"),
        ("1.4", "roadmap-1-4", "recovery"),
    ]
    assess(run, "1.2", "adopt-complete", task_scoped=True)
    assess(run, "1.4", "discard")
    run.move("halt")  # stop normal work: only recovery is under test
    result = finish_run(run)
    assert result["processed"] == []
    rec = result["recovery"]
    assert rec["assessed"] == 2 and rec["resumed"] == 0
    assert [(r["id"], r["classification"], r["action"]) for r in rec["results"]] == [
        ("1.2", "adopt-complete", "report"),
        ("1.4", "discard", "report"),
    ]
    assert {u["id"] for u in rec["unresolved"]} == {"1.2", "1.4"}
    assert result["halted"].startswith("needs-operator-recovery: 2 surviving branch(es)")
    assert "also halted: halted by maintainer" in result["halted"]


def test_review_mode_resumes_an_eligible_adopt_complete_into_dual_review() -> None:
    run = Run(
        ROADMAP,
        survivors=[survivor("roadmap-1-2")],
        resumePartialBranches=True,
        resumeMode="review",
        maxParallel=4,
    )
    assess(run, "1.2", "adopt-complete", task_scoped=True, residual_risk=["touches the parser"])
    reviews = [d for d in of(DispatchStage, run.last[1]) if d.task == "1.2"]
    assert [(d.stage, d.lane) for d in reviews] == [("review", "a"), ("review", "b")]
    risk = reviews[0].extras["residualRisk"]
    assert risk.startswith("----- BEGIN ADVISORY") and risk.endswith("----- END ADVISORY -----")
    assert "- touches the parser" in risk
    land(run, "1.2")
    assert run.status("1.2") == "landed"
    # 1.3 was waiting on 1.2 and now starts through normal selection.
    assert run.status("1.3") == "running"
    run.move("halt")
    result = finish_run(run)
    rec = result["recovery"]
    assert rec["resumed"] == 1 and rec["unresolved"] == []
    assert rec["results"] == [
        {
            "id": "1.2",
            "branch": "roadmap-1-2",
            "classification": "adopt-complete",
            "action": "resume",
            "stage": "review",
        }
    ]
    assert "1.2" in result["processed"]
    assert not result["halted"].startswith("needs-operator-recovery")


@pytest.mark.parametrize(
    ("assessment", "evidence", "reason"),
    [
        ({"task_scoped": True}, {"clean": False}, "dirty-worktree"),
        ({"task_scoped": True}, {"commits": 0}, "no-committed-work"),
        ({"task_scoped": False}, {}, "not-task-scoped"),
        ({"task_scoped": True}, {"task_scoped": False}, "not-task-scoped"),
        (
            {"task_scoped": True, "missing_evidence": ["no tests"]},
            {},
            "missing-validation-evidence",
        ),
        ({"task_scoped": True}, {"validation": []}, "missing-validation-evidence"),
        (
            {"task_scoped": True, "validation": ["the agent says make test passed"]},
            {"validation": []},
            "missing-validation-evidence",
        ),
        ({"task_scoped": True}, {"execplan": None}, "missing-execplan"),
        ({"task_scoped": True}, {"collection_error": "fetch failed"}, "evidence-collection-error"),
        ({"task_scoped": True}, {"clean": None}, "dirty-worktree"),
    ],
    ids=[
        "dirty",
        "no-commits",
        "assessment-out-of-scope",
        "host-out-of-scope",
        "assessment-missing-evidence",
        "no-host-validation",
        "agent-validation-does-not-qualify",
        "no-execplan",
        "collection-error",
        "worktree-state-unknown",
    ],
)
def test_review_mode_downgrades_an_adopt_complete_without_full_evidence(
    assessment: dict[str, Any], evidence: dict[str, Any], reason: str
) -> None:
    run = Run(
        ROADMAP,
        survivors=[survivor("roadmap-1-2", **evidence)],
        resumePartialBranches=True,
        resumeMode="review",
    )
    assess(run, "1.2", "adopt-complete", **assessment)
    assert run.status("1.2") == "pending"
    result = finish_run(run)
    (row,) = result["recovery"]["results"]
    assert (row["classification"], row["action"], row["reason"]) == (
        "continue-manual",
        "report",
        reason,
    )
    (open_,) = result["recovery"]["unresolved"]
    assert open_["reason"] == reason


def test_review_mode_never_resumes_an_addendum_branch() -> None:
    run = Run(
        ROADMAP,
        survivors=[survivor("roadmap-1-1-addendum")],
        resumePartialBranches=True,
        resumeMode="review",
    )
    assess(run, "1.1", "adopt-complete", task_scoped=True)
    (row,) = run_result(run.state)["recovery"]["results"]
    assert (row["action"], row["reason"]) == ("report", "addendum-branch")


@pytest.mark.parametrize(
    ("execplan", "stage"),
    [
        (None, "plan"),
        ("Status: DRAFT\n", "plan"),
        ("# Plan\nStatus: APPROVED\n", "implement"),
        ("Status: In  Progress\n", "implement"),
        ("Status: COMPLETE\n", "review"),
        ("Status: whatever\n", "plan"),
    ],
    ids=["no-plan", "draft", "approved", "in-progress", "complete", "unknown-status"],
)
def test_continue_mode_resumes_at_the_stage_the_execplan_status_names(
    execplan: str | None, stage: str
) -> None:
    run = Run(
        ROADMAP,
        survivors=[survivor("roadmap-1-2", execplan=execplan)],
        resumePartialBranches=True,
        resumeMode="continue",
    )
    assert of(Assess, run.effects) == []  # no judgement agent in continue mode
    first = [d for d in of(DispatchStage, run.effects) if d.task == "1.2"]
    assert {d.stage for d in first} == {stage}
    assert first[0].branch == "roadmap-1-2"
    assert run.status("1.2") == "running"
    land(run, "1.2")
    run.move("halt")
    result = finish_run(run)
    assert result["recovery"]["resumed"] == 1
    assert result["recovery"]["unresolved"] == []


@pytest.mark.parametrize(
    ("evidence", "reason"),
    [
        ({"execplan": "Status: BLOCKED\n"}, "plan-blocked"),
        ({"execplan": "x", "execplan_readable": False}, "plan-unreadable"),
        ({"execplan": None, "execplan_readable": False}, "plan-unreadable"),
        ({"clean": False}, "dirty-worktree"),
        ({"clean": None}, "dirty-worktree"),
        ({"execplan": "Status: COMPLETE\n", "commits": 0}, "no-committed-work"),
        ({"collection_error": "ls-remote timed out"}, "evidence-collection-error"),
    ],
    ids=[
        "blocked",
        "unreadable",
        "unreadable-without-text",
        "dirty",
        "worktree-state-unknown",
        "complete-without-commits",
        "collection-error",
    ],
)
def test_continue_mode_reports_what_it_cannot_resume(evidence: dict[str, Any], reason: str) -> None:
    run = Run(
        ROADMAP,
        survivors=[survivor("roadmap-1-2", **evidence)],
        resumePartialBranches=True,
        resumeMode="continue",
    )
    assert run.status("1.2") == "pending"
    result = finish_run(run)
    (row,) = result["recovery"]["unresolved"]
    assert (row["action"], row["reason"]) == ("report", reason)
    assert result["halted"].startswith("needs-operator-recovery")


@pytest.mark.parametrize(
    "mode", ["assess", "review", "continue"], ids=["assess", "review", "continue"]
)
def test_dry_runs_never_assess_or_resume(mode: str) -> None:
    run = Run(
        ROADMAP,
        survivors=[survivor("roadmap-1-2")],
        resumePartialBranches=True,
        resumeMode=mode,
        dryRun=True,
    )
    assert of(Assess, run.effects) == [] and of(DispatchStage, run.effects) == []
    result = finish_run(run)
    (row,) = result["recovery"]["results"]
    assert row["action"] == "report" and row["reason"] == "dry-run"
    assert result["recovery"]["resumed"] == 0
    if mode != "assess":
        assert row["stage"] == "review"  # what a real run would do


@pytest.mark.parametrize(
    ("mode", "evidence", "reason"),
    [
        ("review", {"clean": None}, "dirty-worktree"),
        ("review", {"commits": 0}, "no-committed-work"),
        ("review", {"validation": []}, "missing-validation-evidence"),
        ("continue", {"clean": None}, "dirty-worktree"),
    ],
    ids=[
        "review-unknown-worktree",
        "review-no-commits",
        "review-no-validation",
        "continue-unknown",
    ],
)
def test_a_dry_run_classifies_from_host_evidence_and_writes_nothing(
    mode: str, evidence: dict[str, Any], reason: str
) -> None:
    """Issue 12 item 8: a dry run reports what recovery would do, read-only."""
    run = Run(
        ROADMAP,
        survivors=[survivor("roadmap-1-2", **evidence)],
        resumePartialBranches=True,
        resumeMode=mode,
        dryRun=True,
    )
    assert run.effects == [] or all(not isinstance(e, Assess | DispatchStage) for e in run.effects)
    (row,) = finish_run(run)["recovery"]["results"]
    assert (row["action"], row["reason"]) == ("report", reason)


def test_a_resumed_candidate_that_fails_stays_unresolved_and_is_assessed_again() -> None:
    run = Run(
        ROADMAP,
        survivors=[survivor("roadmap-1-2", execplan="Status: APPROVED\n")],
        resumePartialBranches=True,
        resumeMode="continue",
        maxParallel=1,
    )
    run.finish("1.2", "exit:3")
    assert run.status("1.2") == "failed"
    assert [a.stage for a in of(Assess, run.last[1])] == ["implement"]  # in-run assessment
    assess(run, "1.2", "adopt-partial")
    result = finish_run(run)
    (row,) = result["recovery"]["unresolved"]
    assert row["classification"] == "adopt-partial" and row["action"] == "resume"
    assert row["reason"].startswith("resumed at implement; failed at implement")


def test_resumes_respect_max_parallel_and_wait_while_the_run_is_stopped() -> None:
    survivors = [survivor(b, execplan="Status: APPROVED\n") for b in ("roadmap-1-2", "roadmap-1-4")]
    run = Run(
        ROADMAP,
        survivors=survivors,
        resumePartialBranches=True,
        resumeMode="continue",
        maxParallel=1,
    )
    assert run.status("1.2") == "running" and run.status("1.4") == "pending"
    run.finish("1.2", "exit:3")  # the failure stops fan-out: 1.4 is never resumed
    assess(run, "1.2", "continue-manual")
    result = finish_run(run)
    reasons = {u["id"]: u["reason"] for u in result["recovery"]["unresolved"]}
    assert reasons["1.4"] == "not resumed: the run stopped first"
    assert result["recovery"]["resumed"] == 1


def test_recovery_replays_from_the_log_and_reissues_an_unanswered_assessment() -> None:
    run = Run(ROADMAP, survivors=[survivor("roadmap-1-2")], resumePartialBranches=True)
    replayed = fold(run.events)
    assert replayed.recovery.held == {"1.2": "roadmap-1-2"}
    (again,) = [e for e in outstanding(replayed) if isinstance(e, Assess)]
    (first,) = of(Assess, run.effects)
    assert again == first


@pytest.mark.parametrize("mode", ["continue", "review"], ids=["continue", "review"])
def test_a_worktree_state_the_host_did_not_supply_counts_as_dirty(mode: str) -> None:
    """Issue 12 item 6: unknown is not clean, so nothing resumes on it."""
    unknown = SurvivorEvidence.model_validate(
        {"commits": 3, "taskScoped": True, "execplan": "Status: COMPLETE\n", "validation": ["ok"]}
    )
    run = Run(
        ROADMAP,
        survivors=[Survivor(branch="roadmap-1-2", head="0" * 40, evidence=unknown)],
        resumePartialBranches=True,
        resumeMode=mode,
    )
    if mode == "review":
        assess(run, "1.2", "adopt-complete", task_scoped=True)
    assert run.status("1.2") == "pending"
    (row,) = finish_run(run)["recovery"]["results"]
    assert (row["action"], row["reason"]) == ("report", "dirty-worktree")
