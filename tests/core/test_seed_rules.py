"""One given/when/then scenario per seed rule, named after the rule."""

from __future__ import annotations

from app.core import events as ev
from app.core.effects import Assess, DispatchStage, Integrate, JudgeGate, Salvage
from app.core.inputs import EndRun, GateJudged, IntegrationFinished, StageFinished
from app.core.integration import IntegrationReport
from app.core.run_view import run_view, task_view
from tests.core.runkit import AT, Run, of, types


# -- verdicts (seed 003, issue item 4) ------------------------------------------
def test_clean_exit_without_marker_is_a_failure_with_both_checks_recorded():
    run = Run(maxParallel=1)
    run.drive_to("1.1.1", "implement")
    events, effects = run.finish("1.1.1", "no-marker")
    judged = of(ev.AttemptJudged, events)[0]
    checks = {c.name: (c.status, c.code) for c in judged.checks}
    assert judged.outcome == "failed"
    assert checks["completion_marker"][0] == "failed"
    assert checks["exit_code"] == ("passed", 0)
    assert run.status("1.1.1") == "failed"
    assert of(Assess, effects), "a product failure is assessed"


def test_marker_seen_passes_and_exit_code_is_recorded_as_skipped_with_reason():
    run = Run(maxParallel=1)
    events, _ = run.finish("1.1.1", "pass")
    judged = of(ev.AttemptJudged, events)[0]
    exit_check = next(c for c in judged.checks if c.name == "exit_code")
    assert judged.outcome == "passed"
    assert exit_check.status == "skipped" and exit_check.reason


def test_verdict_from_an_older_attempt_is_ignored():
    run = Run(maxParallel=1)
    first = run.live("1.1.1")
    run.finish("1.1.1", "crash")  # infra: retried in place under a new token
    second = run.live("1.1.1")
    assert second.token != first.token
    from app.engine.scripted import completion

    old = completion(first, "pass")
    events, effects = run.feed(
        StageFinished(at=AT, task="1.1.1", stage="plan", token=first.token, verdict=old.verdict)
    )
    assert types(events) == ["stale-verdict-ignored"]
    assert effects == []
    assert run.state.task("1.1.1").live[""].token == second.token


def test_verdict_carrying_another_attempts_token_is_not_evidence():
    run = Run(maxParallel=1)
    d = run.live("1.1.1")
    forged = d.model_copy(update={"token": "someone-elses-token"})
    from app.engine.scripted import completion

    c = completion(forged, "pass")
    events, _ = run.feed(
        StageFinished(at=AT, task="1.1.1", stage="plan", token=d.token, verdict=c.verdict)
    )
    assert of(ev.AttemptJudged, events)[0].outcome == "infra"
    assert run.state.task("1.1.1").stage == "plan", "the stage did not pass"


def test_deciding_stage_without_a_schema_valid_report_does_not_pass():
    run = Run(maxParallel=1)
    run.drive_to("1.1.1", "design-review")
    events, effects = run.finish("1.1.1", "schema-invalid")
    judged = of(ev.AttemptJudged, events)[0]
    assert judged.outcome == "infra"
    assert any(c.name == "report_schema" and c.status == "failed" for c in judged.checks)
    assert of(DispatchStage, effects)[0].stage == "design-review", "retried in place"


# -- failure semantics (seed 003, issue item 5) ----------------------------------
def test_failure_keeps_branch_parks_dependents_transitively_and_stops_fan_out():
    run = Run(maxParallel=2)
    assert {t.id for t in run.state.running()} == {"1.1.1", "1.2.1"}
    run.drive_to("1.1.1", "implement")
    events, effects = run.finish("1.1.1", "exit:3")
    parked = {e.task: e.because for e in of(ev.TaskParked, events)}
    assert parked == {"1.1.2": "1.1.1", "1.1.3": "1.1.1"}
    assert of(ev.RunStopped, events)[0].kind == "failure"
    assert run.state.task("1.1.1").branch == "roadmap-1-1-1"
    assert not any("delete" in type(f).__name__.lower() for f in run.effects)
    # the in-flight sibling finishes its pipeline and lands; nothing new starts
    mark = len(run.events)
    for _ in range(12):
        if run.status("1.2.1") != "running":
            break
        _, effects = run.finish_stage("1.2.1")
        if of(Integrate, effects):
            run.feed(IntegrationFinished(at=AT, task="1.2.1", report=_landed()))
    assert run.status("1.2.1") == "landed"
    assert not of(ev.TaskStarted, run.events[mark:])


def test_second_guard_a_task_with_a_failed_dependency_is_never_ready():
    run = Run(maxParallel=1)
    run.finish("1.1.1", "no-marker")
    run.state.task("1.1.2").status = "pending"  # whatever its status says
    assert "1.1.2" not in run.state.ready()


def test_dependency_is_met_only_when_its_task_has_landed():
    run = Run(maxParallel=4)
    assert "1.1.2" not in {t.id for t in run.state.running()}
    run.drive_to("1.1.1", "review")
    run.finish_stage("1.1.1")  # review passes, integration requested
    assert run.status("1.1.2") == "pending"
    run.feed(IntegrationFinished(at=AT, task="1.1.1", report=_landed()))
    assert run.status("1.1.2") == "running"


# -- fault classes (seed 000, issue item 7) ---------------------------------------
def test_infra_fault_retries_in_place_then_success_lands():
    run = Run(maxParallel=1, stageAttempts=2)
    run.drive_to("1.1.1", "implement")
    events, effects = run.finish("1.1.1", "crash")
    assert of(ev.FaultRecorded, events)[0].retried is True
    assert of(DispatchStage, effects)[0].stage == "implement"
    run.finish("1.1.1", "pass")
    assert run.state.metrics.to_json()["infraRetries"] == 1
    assert run.state.task("1.1.1").stage == "gates"


def test_persistent_infra_fault_ends_infra_fault_unassessed_with_resume_hint():
    run = Run(maxParallel=1, stageAttempts=2)
    run.drive_to("1.1.1", "implement")
    run.finish("1.1.1", "crash")
    _, effects = run.finish("1.1.1", "timeout")
    t = run.state.task("1.1.1")
    assert t.status == "infra-fault"
    assert 'resumePartialBranches=true and resumeMode="continue"' in run.state.stop.reason
    assert not of(Assess, effects), "infra faults are not assessed"
    assert of(Salvage, effects)[0].classification == "infra-fault"
    assert run.state.metrics.to_json() == {
        "infraRetries": 1,
        "infraFaults": 1,
        "providerFaults": 0,
        "authFaults": 0,
    }


def test_provider_outage_defers_without_assessment_and_suppresses_the_flush():
    run = Run(maxParallel=2)
    events, effects = run.finish("1.1.1", "provider:529")
    assert run.status("1.1.1") == "deferred"
    assert not of(Assess, effects)
    assert run.state.metrics.provider_faults == 1
    run.state.task("1.2.1").status = "failed"  # a product failure elsewhere
    run.state.task("1.2.1").live = {}
    events, effects = run.feed(EndRun(at=AT))
    assert of(ev.RunEnded, events)[0].remediation == "suppressed"
    assert run_view(run.state).remediate == ()


def test_auth_failure_halts_everything_and_is_never_assessed():
    run = Run(maxParallel=2)
    _, effects = run.finish("1.1.1", "auth")
    assert run.state.stop.kind == "auth"
    assert not of(Assess, effects)
    events, effects = run.finish("1.2.1", "pass")  # the sibling's attempt finishes
    assert not of(DispatchStage, effects), "nothing dispatches after auth failure"
    assert of(ev.TaskSuspended, events)[0].stage == "design-review"


def test_integration_fault_is_never_retried_and_points_at_the_base():
    run = Run(maxParallel=1)
    run.drive_to("1.1.1", "review")
    run.finish_stage("1.1.1")
    _, effects = run.feed(IntegrationFinished(at=AT, task="1.1.1", fault="integrator crashed"))
    assert run.status("1.1.1") == "infra-fault"
    assert not of(Integrate, effects)
    assert "origin/main" in run.state.task("1.1.1").detail


def test_integration_counts_only_with_all_five_fields():
    run = Run(maxParallel=1)
    run.drive_to("1.1.1", "review")
    run.finish_stage("1.1.1")
    report = IntegrationReport(ok=True, squash_merged=True, pushed=True, roadmap_marked_done=True)
    run.feed(IntegrationFinished(at=AT, task="1.1.1", report=report))
    assert run.status("1.1.1") == "failed"
    assert run.state.task("1.1.1").stage == "integrate"
    assert "need ok+rebased" in run.state.task("1.1.1").detail


# -- per-gate budgets (seed 001, issue item 8) ------------------------------------
def test_moving_fingerprint_is_never_charged():
    run = Run(maxParallel=1, gateRetryBudget=0)
    run.drive_to("1.1.1", "implement")
    for reason in ("undefined name foo", "undefined name bar", "missing import baz"):
        events, effects = run.finish("1.1.1", f"gate:build:{reason}")
        assert of(ev.GateCharged, events)[0].charged is False
        assert of(DispatchStage, effects)[0].stage == "implement"
    run.finish("1.1.1", "pass")
    assert run.state.task("1.1.1").stage == "gates"


def test_repeated_fingerprint_drains_the_budget_and_fails_a_deterministic_gate():
    run = Run(maxParallel=1, gateRetryBudget={"build": 2})
    run.drive_to("1.1.1", "implement")
    charged = []
    for _ in range(4):
        events, _ = run.finish("1.1.1", "gate:build:tests failed at line 12")
        charged.append(of(ev.GateCharged, events)[0].charged)
        if run.status("1.1.1") == "failed":
            break
    assert charged == [False, True, True, False]
    assert "budget exhausted" in run.state.task("1.1.1").detail


def test_masked_numbers_keep_a_repeated_failure_recognisable():
    run = Run(maxParallel=1, gateRetryBudget=1)
    run.drive_to("1.1.1", "implement")
    run.finish("1.1.1", "gate:contract:3 tests failed in 0.41s")
    events, _ = run.finish("1.1.1", "gate:contract:3 tests failed in 0.57s")
    assert of(ev.GateCharged, events)[0].charged is True


def test_gate_budgets_reset_when_the_stage_changes():
    run = Run(maxParallel=1, gateRetryBudget=1)
    run.drive_to("1.1.1", "implement")
    run.finish("1.1.1", "gate:build:x")
    run.finish("1.1.1", "gate:build:x")
    assert run.state.task("1.1.1").ledger("implement", "build").charges == 1
    run.finish("1.1.1", "pass")
    assert run.state.task("1.1.1").ledgers == {}


def test_review_gate_exhaustion_asks_the_judge_continue_resets_once_then_terminal():
    run = Run(maxParallel=1, gateRetryBudget={"review": 0}, maxReviewRounds=10)
    run.drive_to("1.1.1", "review")
    run.finish_stage("1.1.1", "changes:missing tests")  # first: progress, fix round
    assert run.state.task("1.1.1").stage == "fix"
    run.drive_to("1.1.1", "review")
    _, effects = run.finish_stage("1.1.1", "changes:missing tests")
    judge = of(JudgeGate, effects)[0]
    events, _ = run.feed(
        GateJudged(at=AT, task="1.1.1", stage=judge.stage, gate="review", decision="continue")
    )
    assert of(ev.GateJudgeDecided, events)[0].decision == "continue"
    assert run.state.task("1.1.1").stage == "fix"
    run.drive_to("1.1.1", "review")
    run.finish_stage("1.1.1", "changes:missing tests")  # first failure after reset: free
    run.drive_to("1.1.1", "review")
    _, effects = run.finish_stage("1.1.1", "changes:missing tests")
    assert not of(JudgeGate, effects), "a second exhaustion is terminal"
    assert run.status("1.1.1") == "failed"


def test_review_gate_judge_recover_routes_to_fix_and_returns_to_review():
    run = Run(maxParallel=1, gateRetryBudget={"review": 0}, maxReviewRounds=10)
    run.drive_to("1.1.1", "review")
    run.finish_stage("1.1.1", "changes:x")
    run.drive_to("1.1.1", "review")
    run.finish_stage("1.1.1", "changes:x")
    events, effects = run.feed(
        GateJudged(at=AT, task="1.1.1", stage="review", gate="review", decision="recover")
    )
    assert of(ev.TicketOpened, events)[0].route == "fix"
    events, effects = run.finish("1.1.1", "pass")
    assert of(ev.TicketClosed, events)
    assert {d.stage for d in of(DispatchStage, effects)} == {"review"}


def test_review_gate_judge_fail_ends_the_task():
    run = Run(maxParallel=1, gateRetryBudget={"review": 0}, maxReviewRounds=10)
    run.drive_to("1.1.1", "review")
    run.finish_stage("1.1.1", "changes:x")
    run.drive_to("1.1.1", "review")
    run.finish_stage("1.1.1", "changes:x")
    run.feed(GateJudged(at=AT, task="1.1.1", stage="review", gate="review", decision="fail"))
    assert run.status("1.1.1") == "failed"


# -- retry-agency invariant (seed 001, issue item 9) -------------------------------
def test_write_less_stage_build_failure_opens_a_ticket_routes_to_fix_and_returns():
    run = Run(maxParallel=1)
    run.drive_to("1.1.1", "gates")
    events, effects = run.finish("1.1.1", "gate:build:compile error")
    ticket = of(ev.TicketOpened, events)[0]
    assert (ticket.origin, ticket.category, ticket.capability, ticket.route) == (
        "gates",
        "build-broken",
        "write",
        "fix",
    )
    assert [d.stage for d in of(DispatchStage, effects)] == ["fix"]
    assert not of(ev.GateCharged, events), "a write-less stage never retries the gate in place"
    events, effects = run.finish("1.1.1", "pass")
    assert of(ev.TicketClosed, events)[0].origin == "gates"
    assert [d.stage for d in of(DispatchStage, effects)] == ["gates"]


def test_review_stage_static_failure_returns_to_the_exact_origin():
    run = Run(maxParallel=1)
    run.drive_to("1.1.1", "review")
    run.finish("1.1.1", "gate:static:lint", lane="a")
    assert run.state.task("1.1.1").stage == "fix"
    _, effects = run.finish("1.1.1", "pass")
    assert sorted(d.lane for d in of(DispatchStage, effects)) == ["a", "b"]
    assert {d.stage for d in of(DispatchStage, effects)} == {"review"}


def test_route_budget_bounds_recovery_per_stage():
    run = Run(maxParallel=1, routeBudget={"gates": 1})
    run.drive_to("1.1.1", "gates")
    run.finish("1.1.1", "gate:build:a")
    run.finish("1.1.1", "pass")  # fix
    run.finish("1.1.1", "gate:build:b")
    assert run.status("1.1.1") == "failed"
    assert "route budget exhausted" in run.state.task("1.1.1").detail


# -- pipeline (issue item 3) ---------------------------------------------------------
def test_dual_review_needs_both_reviewers_to_approve():
    run = Run(maxParallel=1)
    run.drive_to("1.1.1", "review")
    events, effects = run.finish("1.1.1", "approve", lane="a")
    assert of(ev.AttemptJudged, events) and not of(Integrate, effects)
    last = task_view(run.state, run.state.task("1.1.1")).last
    assert last is not None and (last.name, last.ok) == ("review/a", True)
    run.finish("1.1.1", "changes:needs docs", lane="b")
    assert run.state.task("1.1.1").stage == "fix"
    run.drive_to("1.1.1", "review")
    run.finish("1.1.1", "approve", lane="a")
    _, effects = run.finish("1.1.1", "approve", lane="b")
    assert of(Integrate, effects)[0].ticks == ["1.1.1"]


def test_review_rounds_are_bounded():
    run = Run(maxParallel=1, maxReviewRounds=2)
    for reason in ("a", "b"):
        run.drive_to("1.1.1", "review")
        run.finish_stage("1.1.1", f"changes:{reason}")
    assert run.status("1.1.1") == "failed"
    assert "after 2 round(s)" in run.state.task("1.1.1").detail


def test_design_review_changes_replan_within_bounded_rounds():
    run = Run(maxParallel=1, maxDesignRounds=2)
    run.finish("1.1.1", "pass")
    run.finish("1.1.1", "changes:plan misses the migration")
    assert run.state.task("1.1.1").stage == "plan"
    assert run.live("1.1.1").extras["feedback"] == "plan misses the migration"
    run.finish("1.1.1", "pass")
    run.finish("1.1.1", "changes:still missing")
    assert run.status("1.1.1") == "failed"


def test_auto_merge_off_leaves_the_branch_manual_merge_ready():
    run = Run(maxParallel=1, autoMerge=False)
    run.drive_to("1.1.1", "review")
    _, effects = run.finish_stage("1.1.1")
    assert run.status("1.1.1") == "manual-merge-ready"
    assert not of(Integrate, effects)


def test_dry_run_dispatches_nothing():
    run = Run(dryRun=True)
    assert not of(DispatchStage, run.effects)
    assert all(t.status == "pending" for t in run.state.tasks.values())


def test_max_parallel_bounds_concurrent_tasks():
    run = Run(maxParallel=1)
    assert [t.id for t in run.state.running()] == ["1.1.1"]


def _landed() -> IntegrationReport:
    return IntegrationReport(
        ok=True, rebased=True, squash_merged=True, pushed=True, roadmap_marked_done=True, sha="abc"
    )
