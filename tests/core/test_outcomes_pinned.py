"""What a judged attempt leads to, at the edges the broad tests do not reach:
the attempt backstop, the exact charge arithmetic, and which reviewer's words
reach the fix stage."""

from __future__ import annotations

from app.core import events as ev
from app.core.budgets import Ledger, charge, fingerprint, normalise_reason
from app.core.effects import DispatchStage
from app.core.inputs import GateJudged
from app.core.outcomes import ATTEMPT_BACKSTOP
from tests.core.runkit import AT, Run, of


def test_a_gate_whose_failure_keeps_moving_is_stopped_by_the_attempt_backstop() -> None:
    run = Run()
    run.drive_to("1.1.1", "implement")
    attempts = 0
    while run.status("1.1.1") == "running":
        attempts += 1
        # A different count each time: progress, so the budget is never charged.
        run.finish("1.1.1", f"gate:build:{attempts} modules fail to compile")
        assert attempts <= ATTEMPT_BACKSTOP, "the backstop never fired"
    assert attempts == ATTEMPT_BACKSTOP == 25
    [failed] = of(ev.TaskFailed, run.events)
    assert failed.stage == "implement"
    assert failed.detail.startswith("implement made 25 attempts without passing: ")
    charged = [e for e in run.events if isinstance(e, ev.GateCharged)]
    assert charged and not any(e.charged for e in charged)


def test_a_repeated_failure_is_charged_until_the_budget_is_spent() -> None:
    run = Run(gate_retry_budget={"build": 2})
    run.drive_to("1.1.1", "implement")
    for _ in range(10):
        if run.status("1.1.1") != "running":
            break
        run.finish("1.1.1", "gate:build:cannot compile")
    charges = [(e.charged, e.decision, e.charges, e.budget) for e in of(ev.GateCharged, run.events)]
    assert charges == [
        (False, "retry", 0, 2),  # first sight: a new fingerprint is progress
        (True, "retry", 1, 2),
        (True, "retry", 2, 2),
        (False, "exhausted", 2, 2),
    ]
    [failed] = of(ev.TaskFailed, run.events)
    assert failed.detail == (
        "build gate budget exhausted (2) on a repeated failure: cannot compile"
    )


def test_charge_arithmetic() -> None:
    fp = fingerprint("same")
    first = charge(Ledger(), fp, budget=1)
    assert (first.decision, first.charged, first.ledger) == ("retry", False, Ledger(fp, 0, False))
    second = charge(first.ledger, fp, budget=1)
    assert (second.decision, second.charged, second.ledger.charges) == ("retry", True, 1)
    third = charge(second.ledger, fp, budget=1)
    assert (third.decision, third.charged, third.ledger) == ("exhausted", False, second.ledger)
    moved = charge(second.ledger, fingerprint("other"), budget=1)
    assert (moved.decision, moved.charged, moved.ledger.charges) == ("retry", False, 1)
    reset = Ledger(fp, 1, reset_used=True)
    assert charge(reset, fp, budget=5).ledger.reset_used is True
    assert charge(reset, fingerprint("x"), budget=5).ledger.reset_used is True


def test_a_zero_budget_is_exhausted_on_the_first_repeat() -> None:
    fp = fingerprint("same")
    assert charge(Ledger(fp, 0), fp, budget=0).decision == "exhausted"


def test_normalising_masks_what_changes_between_identical_failures() -> None:
    reason = (
        "  FAILED at 2024-05-01T12:30:45.123+02:00 in 12.5s, commit deadbeef1,"
        " src/x.py:12:4, line 7, /tmp/pytest-of-u/x.log  "
    )
    assert normalise_reason(reason) == (
        "failed at <time> in <duration>, commit <hex>, src/x.py<at>, <at>, <tmp>"
    )
    assert normalise_reason("3 tests failed") != normalise_reason("1 test failed")
    assert fingerprint("Build  FAILED") == fingerprint("build failed")
    assert len(fingerprint("x")) == 16


def test_the_fix_stage_hears_the_reviewer_who_asked_for_changes() -> None:
    run = Run()
    run.drive_to("1.1.1", "review")
    run.finish("1.1.1", "changes:the parser drops trailing commas", "a")
    run.finish("1.1.1", "pass", "b")
    fix = run.live("1.1.1")
    assert fix.stage == "fix"
    assert "trailing commas" in fix.extras["feedback"]


def test_the_fix_stage_hears_the_reviewer_who_asked_for_changes_when_it_answered_first() -> None:
    run = Run()
    run.drive_to("1.1.1", "review")
    run.finish("1.1.1", "pass", "a")
    _, effects = run.finish("1.1.1", "changes:missing tests for the empty file", "b")
    [fix] = of(DispatchStage, effects)
    assert fix.stage == "fix"
    assert "empty file" in fix.extras["feedback"]


def test_review_changes_past_the_round_limit_fail_the_task() -> None:
    run = Run(max_review_rounds=2)
    run.drive_to("1.1.1", "review")
    run.finish("1.1.1", "changes:needs docs", "a")
    run.finish("1.1.1", "pass", "b")
    assert run.live("1.1.1").stage == "fix"
    run.drive_to("1.1.1", "review")
    run.finish("1.1.1", "changes:needs more docs", "a")
    run.finish("1.1.1", "pass", "b")
    assert run.status("1.1.1") == "failed"
    [failed] = of(ev.TaskFailed, run.events)
    assert failed.detail == "review still requests changes after 2 round(s): needs more docs"


def test_design_review_changes_send_the_task_back_to_plan() -> None:
    run = Run()
    run.finish("1.1.1", "pass")
    _, effects = run.finish("1.1.1", "changes:the plan skips migration")
    [again] = of(DispatchStage, effects)
    assert again.stage == "plan"
    assert "migration" in again.extras["feedback"]


def test_an_infrastructure_fault_is_retried_up_to_the_stage_attempts_then_fails() -> None:
    run = Run(stage_attempts=3)
    run.finish("1.1.1", "crash")
    run.finish("1.1.1", "crash")
    assert run.status("1.1.1") == "running"
    run.finish("1.1.1", "crash")
    assert run.status("1.1.1") == "infra-fault"
    retried = [e.retried for e in of(ev.FaultRecorded, run.events)]
    assert retried == [True, True, False]
    [failed] = of(ev.TaskFailed, run.events)
    assert failed.detail.startswith("infrastructure fault persisted after 3 attempt(s): ")


def test_both_reviewers_findings_reach_the_verdict_joined() -> None:
    run = Run(max_review_rounds=1)
    run.drive_to("1.1.1", "review")
    run.finish("1.1.1", "changes:rename the flag", "a")
    run.finish("1.1.1", "changes:add a test", "b")
    [failed] = of(ev.TaskFailed, run.events)
    assert failed.detail.endswith(": rename the flag; add a test")


def test_review_changes_go_back_to_fix_and_design_changes_back_to_plan_not_forward() -> None:
    run = Run()
    run.finish("1.1.1", "pass")
    events, _ = run.finish("1.1.1", "changes:the plan skips migration")
    [entered] = of(ev.StageEntered, events)
    assert (entered.stage, entered.previous, entered.forward) == ("plan", "design-review", False)
    run.drive_to("1.1.1", "review")
    run.finish("1.1.1", "changes:needs docs", "a")
    events, _ = run.finish("1.1.1", "pass", "b")
    [entered] = of(ev.StageEntered, events)
    assert (entered.stage, entered.previous, entered.forward) == ("fix", "review", False)


def test_a_ticket_enters_its_route_backwards_from_its_origin() -> None:
    run = Run()
    run.drive_to("1.1.1", "gates")
    events, _ = run.finish("1.1.1", "gate:build:cannot compile")
    [entered] = of(ev.StageEntered, events)
    assert (entered.stage, entered.previous, entered.forward) == ("fix", "gates", False)
    run.drive_to("1.1.1", "gates")
    events, _ = run.finish("1.1.1", "gate:build:still cannot compile")
    [ticket] = of(ev.TicketOpened, events)
    assert ticket.ticket == 2


def test_a_writer_whose_review_gate_judge_says_continue_retries_in_place() -> None:
    run = Run(gate_retry_budget={"review": 1})
    run.drive_to("1.1.1", "implement")
    while run.state.task("1.1.1").awaiting != "judge":
        assert run.status("1.1.1") == "running"
        run.finish("1.1.1", "gate:review:the same finding")
    events, effects = run.feed(
        GateJudged(at=AT, task="1.1.1", stage="implement", gate="review", decision="continue")
    )
    [again] = of(DispatchStage, effects)
    assert (again.stage, again.lane) == ("implement", "")
    assert "stage-entered" not in [e.type for e in events]


def test_auth_and_provider_faults_are_recorded_as_not_retried() -> None:
    run = Run()
    run.finish("1.1.1", "auth")
    [fault] = of(ev.FaultRecorded, run.events)
    assert (fault.kind, fault.retried) == ("auth", False)
    run = Run()
    run.finish("1.1.1", "provider:503")
    [fault] = of(ev.FaultRecorded, run.events)
    assert (fault.kind, fault.retried) == ("provider", False)
    [stopped] = of(ev.RunStopped, run.events)
    assert stopped.kind == "provider"
    assert stopped.reason == (
        "task 1.1.1 provider fault at plan: provider outage (HTTP 503); deferred and requeued "
        "for the next run (not assessed)"
    )
