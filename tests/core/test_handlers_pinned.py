"""What each input handler leaves in the state, and so in the views people read.

These pin details a maintainer reads (the last attempt's name and conclusion,
the attempt numbers, which stop wins, who is left for remediation) that broader
scenario tests pass through without looking at; each was a mutant of
`handlers.py` or `flow.py` that the suite let live.
"""

from __future__ import annotations

from app.core import events as ev
from app.core.assessment import Assessment, SalvageResult
from app.core.effects import DispatchStage
from app.core.inputs import (
    AssessmentFinished,
    EndRun,
    GateJudged,
    IntegrationFinished,
    PullClosed,
    SalvageFinished,
    StageFinished,
)
from app.core.integration import IntegrationReport
from app.core.run_view import Judged, run_view, task_view
from app.core.state import apply
from tests.core.runkit import AT, Run, of, types

LANDED = IntegrationReport(
    ok=True, rebased=True, squash_merged=True, pushed=True, roadmap_marked_done=True, sha="abc1234"
)


def _last(run: Run, task: str = "1.1.1") -> Judged | None:
    return task_view(run.state, run.state.task(task)).last


def test_a_passing_stage_shows_a_successful_last_attempt_named_for_its_stage() -> None:
    run = Run()
    run.finish("1.1.1", "pass")
    last = _last(run)
    assert last is not None
    assert (last.name, last.attempt, last.outcome, last.ok) == ("plan", 1, "passed", True)
    [judged] = of(ev.AttemptJudged, run.last[0])
    assert last.detail == judged.detail and last.detail  # the judge's detail, shown


def test_a_failing_stage_shows_a_failed_last_attempt_with_the_judges_reason() -> None:
    run = Run()
    run.finish("1.1.1", "exit:2")
    last = _last(run)
    assert last is not None and not last.ok
    [judged] = of(ev.AttemptJudged, run.last[0])
    assert (last.outcome, last.detail) == (judged.outcome, judged.detail)


def test_review_lanes_show_the_last_attempt_named_for_its_lane() -> None:
    run = Run()
    run.drive_to("1.1.1", "review")
    run.finish("1.1.1", "pass", "a")
    check_a = _last(run)
    number = run.dispatched[("1.1.1", "b")].attempt
    run.finish("1.1.1", "changes:missing tests", "b")
    check_b = _last(run)
    assert check_a is not None and check_b is not None
    assert check_a.name == "review/a"
    assert (check_b.name, check_b.attempt, check_b.detail) == ("review/b", number, "missing tests")
    # Asking for changes is a finished review, not a failed attempt.
    assert (check_a.ok, check_b.ok) == (True, True)


def test_the_judgement_event_records_the_attempt_and_the_verdict() -> None:
    run = Run()
    d = run.live("1.1.1")
    run.finish("1.1.1", "gate:build:cannot compile")
    [judged] = of(ev.AttemptJudged, run.last[0])
    assert (judged.task, judged.stage, judged.attempt, judged.lane) == ("1.1.1", "plan", 1, "")
    assert judged.token == d.token
    assert judged.outcome == "gate"
    assert judged.gate == "build"
    assert judged.verdict is not None and judged.verdict.token == d.token
    assert [c.name for c in judged.checks] == [c.name for c in judged.verdict.checks]


def test_attempts_are_numbered_from_one() -> None:
    run = Run()
    first = run.live("1.1.1")
    assert first.attempt == 1
    run.finish("1.1.1", "crash")
    retry = run.live("1.1.1")
    assert retry.attempt == 2
    [dispatched] = [e for e in run.events if isinstance(e, ev.StageDispatched)][:1]
    assert dispatched.attempt == 1


def test_a_verdict_naming_no_live_attempt_is_ignored_and_says_so() -> None:
    run = Run()
    d = run.live("1.1.1")
    events, effects = run.feed(
        StageFinished(at=AT, task="1.1.1", stage="plan", token="token-forged", verdict=None)
    )
    [ignored] = of(ev.StaleVerdictIgnored, events)
    assert (ignored.task, ignored.stage, ignored.token) == ("1.1.1", "plan", "token-forged")
    assert "no live attempt" in ignored.detail
    assert effects == [] and _last(run) is None
    assert run.live("1.1.1") is d


def test_a_verdict_for_another_stage_of_the_live_token_is_ignored() -> None:
    run = Run()
    d = run.live("1.1.1")
    events, _ = run.feed(
        StageFinished(at=AT, task="1.1.1", stage="implement", token=d.token, verdict=None)
    )
    assert types(events)[0] == "stale-verdict-ignored"
    assert run.status("1.1.1") == "running"


def test_a_verdict_for_an_unknown_task_changes_nothing() -> None:
    run = Run()
    events, effects = run.feed(
        StageFinished(at=AT, task="9.9.9", stage="plan", token="token-000001", verdict=None)
    )
    assert events == [] and effects == []


def _at_integrate(run: Run, task: str = "1.1.1") -> None:
    run.drive_to(task, "review")
    run.finish_stage(task)
    assert run.state.task(task).awaiting == "integrate"


def test_an_integration_that_reports_a_fault_never_lands_even_with_a_good_report() -> None:
    run = Run()
    _at_integrate(run)
    events, _ = run.feed(
        IntegrationFinished(at=AT, task="1.1.1", report=LANDED, fault="push timed out")
    )
    assert "task-landed" not in types(events)
    assert run.status("1.1.1") == "infra-fault"
    [fault] = of(ev.FaultRecorded, events)
    assert (fault.kind, fault.stage, fault.retried) == ("infra", "integrate", False)
    assert "push timed out" in fault.detail
    [failed] = of(ev.TaskFailed, events)
    assert "origin/main" in failed.detail and "never retried" in failed.detail


def test_an_integration_without_a_report_is_an_infrastructure_fault() -> None:
    run = Run()
    _at_integrate(run)
    events, _ = run.feed(IntegrationFinished(at=AT, task="1.1.1"))
    [fault] = of(ev.FaultRecorded, events)
    assert fault.detail == "no report"
    assert run.status("1.1.1") == "infra-fault"


def test_a_complete_report_lands_the_task_at_its_sha() -> None:
    run = Run()
    _at_integrate(run)
    events, _ = run.feed(IntegrationFinished(at=AT, task="1.1.1", report=LANDED))
    [landed] = of(ev.TaskLanded, events)
    assert landed.sha == "abc1234"
    assert run.status("1.1.1") == "landed"
    # Its dependent starts in the same step.
    assert run.live("1.1.2").stage == "plan"


def test_an_incomplete_report_fails_the_task_with_the_missing_steps() -> None:
    run = Run()
    _at_integrate(run)
    half = IntegrationReport(ok=True, rebased=True, squash_merged=True, pushed=False, sha="abc")
    events, _ = run.feed(IntegrationFinished(at=AT, task="1.1.1", report=half))
    assert run.status("1.1.1") == "failed"
    [failed] = of(ev.TaskFailed, events)
    assert failed.stage == "integrate"


def test_an_integration_result_for_a_task_not_integrating_is_dropped() -> None:
    run = Run()
    events, _ = run.feed(IntegrationFinished(at=AT, task="1.1.1", report=LANDED))
    assert "task-landed" not in types(events)
    assert "integration-recorded" not in types(events)
    assert run.status("1.1.1") == "running"


def test_an_operator_halt_outranks_a_later_infrastructure_fault() -> None:
    run = Run(stage_attempts=1)
    run.move("halt", reason="pausing for the release")
    run.finish("1.1.1", "crash")  # the in-flight attempt still reports
    assert run.status("1.1.1") == "infra-fault"
    stop = run.state.stop
    assert stop is not None and stop.kind == "operator"
    assert "pausing for the release" in stop.reason


def test_an_infrastructure_fault_outranks_an_earlier_failure_stop() -> None:
    run = Run(stage_attempts=1)
    run.finish("1.2.1", "exit:1")
    assert run.state.stop is not None and run.state.stop.kind == "failure"
    run.finish("1.1.1", "crash")
    assert run.state.stop is not None and run.state.stop.kind == "infra"


def test_a_failure_does_not_replace_an_infrastructure_stop() -> None:
    run = Run(stage_attempts=1)
    run.finish("1.1.1", "crash")
    run.finish("1.2.1", "exit:1")
    assert run.state.stop is not None and run.state.stop.kind == "infra"


def test_remediation_is_flushed_at_the_end_of_a_run_with_a_plain_failure() -> None:
    run = Run()
    run.finish("1.1.1", "exit:1")
    assert run_view(run.state).remediate == ()  # only the run's end decides it
    events, _ = run.feed(EndRun(at=AT))
    assert of(ev.RunEnded, events)[0].remediation == "flushed"
    view = run_view(run.state)
    assert view.remediate == ("1.1.1",)
    assert view.remediation == "needs remediation: 1.1.1 failed with no fault to explain it"


def test_a_dry_run_never_flushes_remediation() -> None:
    run = Run(dry_run=True)
    # A dry run dispatches nothing, so its failures come from elsewhere (a
    # roadmap check, say): fold one in directly.
    apply(run.state, ev.TaskFailed(at=AT, task="1.1.1", stage="plan", status="failed", detail="x"))
    events, _ = run.feed(EndRun(at=AT))
    assert of(ev.RunEnded, events)[0].remediation == "none"
    view = run_view(run.state)
    assert (view.remediate, view.remediation) == ((), None)


def test_a_fault_suppresses_remediation_for_the_failures_it_explains() -> None:
    run = Run(stage_attempts=1)
    run.finish("1.2.1", "exit:1")
    run.finish("1.1.1", "crash")
    events, _ = run.feed(EndRun(at=AT))
    assert of(ev.RunEnded, events)[0].remediation == "suppressed"
    view = run_view(run.state)
    assert view.remediate == ()
    assert view.remediation is not None and view.remediation.startswith("remediation suppressed")


def test_a_clean_run_ends_without_remediation() -> None:
    run = Run(roadmap="## P\n- [ ] 1.1.1. Only\n")
    events, _ = run.feed(EndRun(at=AT))
    assert of(ev.RunEnded, events)[-1].remediation == "none"
    assert run_view(run.state).remediation is None


def _awaiting_judge(run: Run) -> None:
    run.drive_to("1.1.1", "review")
    for _ in range(20):
        if run.state.task("1.1.1").awaiting == "judge":
            return
        if not run.state.task("1.1.1").live:
            raise AssertionError("1.1.1 stopped before the review gate judge")
        if run.state.task("1.1.1").stage == "review":
            run.finish("1.1.1", "changes:same finding", "a")
            run.finish("1.1.1", "pass", "b")
        else:
            run.finish_stage("1.1.1")
    raise AssertionError("the review gate never asked its judge")


def test_a_gate_judge_decision_for_a_task_no_longer_waiting_is_dropped() -> None:
    run = Run(max_review_rounds=10)
    _awaiting_judge(run)
    run.feed(GateJudged(at=AT, task="1.1.1", stage="review", gate="review", decision="continue"))
    assert run.state.task("1.1.1").awaiting != "judge"
    events, _effects = run.feed(
        GateJudged(at=AT, task="1.1.1", stage="review", gate="review", decision="fail")
    )
    assert "gate-judge-decided" not in types(events)
    assert run.status("1.1.1") == "running"


def test_a_gate_judge_decision_records_who_decided_what() -> None:
    run = Run(max_review_rounds=10)
    _awaiting_judge(run)
    events, _ = run.feed(
        GateJudged(at=AT, task="1.1.1", stage="review", gate="review", decision="fail", by="alice")
    )
    [decided] = of(ev.GateJudgeDecided, events)
    assert (decided.task, decided.stage, decided.gate, decided.decision, decided.by) == (
        "1.1.1",
        "review",
        "review",
        "fail",
        "alice",
    )
    [failed] = of(ev.TaskFailed, events)
    assert failed.detail.startswith("the review gate judge decided FAIL: ")
    assert "same finding" in failed.detail


def test_a_merge_by_a_person_lands_the_task_and_releases_its_dependents() -> None:
    run = Run(stage_attempts=1)
    run.finish("1.1.1", "exit:1")
    assert run.status("1.1.2") == "blocked"
    events, _ = run.feed(
        PullClosed(at=AT, task="1.1.1", number=7, merged=True, sha="def5678", by="alice")
    )
    [merged] = of(ev.TaskMergedByPerson, events)
    assert (merged.number, merged.sha, merged.by) == (7, "def5678", "alice")
    assert run.status("1.1.2") != "blocked"


def test_a_close_without_merge_fails_the_task_at_its_stage_naming_who_closed_it() -> None:
    run = Run()
    run.finish("1.1.1", "pass")  # now at design-review
    events, _ = run.feed(PullClosed(at=AT, task="1.1.1", number=7, merged=False, by="bob"))
    [failed] = of(ev.TaskFailed, events)
    assert failed.stage == "design-review"
    assert failed.detail == "pull request #7 was closed unmerged by bob"


def test_closing_the_pull_request_of_a_failed_task_changes_nothing() -> None:
    run = Run(stage_attempts=1)
    run.finish("1.1.1", "exit:1")
    events, _ = run.feed(PullClosed(at=AT, task="1.1.1", number=7, merged=False, by="bob"))
    assert "task-failed" not in types(events)


def test_a_pull_request_closed_after_landing_changes_nothing() -> None:
    run = Run()
    _at_integrate(run)
    run.feed(IntegrationFinished(at=AT, task="1.1.1", report=LANDED))
    events, _ = run.feed(PullClosed(at=AT, task="1.1.1", number=7, merged=True, sha="x", by="a"))
    assert "task-merged-by-person" not in types(events)
    assert run.status("1.1.1") == "landed"


def test_dispatches_carry_the_task_branch_and_base() -> None:
    run = Run()
    d = run.live("1.1.1")
    assert isinstance(d, DispatchStage)
    assert d.branch == "roadmap-1-1-1"
    assert d.writes is True
    assert d.subtasks == []


def test_a_roadmap_with_errors_stops_the_run_naming_every_problem() -> None:
    run = Run(roadmap="## P\n- [ ] 1.1.1. A\n- [ ] 1.1.1. B\n- [ ] 1.1.2. C\n- [ ] 1.1.2. D\n")
    [stopped] = of(ev.RunStopped, run.events)
    assert stopped.kind == "failure"
    assert stopped.reason == (
        "roadmap has errors, nothing is scheduled: "
        "task id 1.1.1 appears 2 times, on lines 2, 3; "
        "task id 1.1.2 appears 2 times, on lines 4, 5"
    )
    assert not of(DispatchStage, run.effects)


def test_the_run_records_the_tasks_it_was_told_to_hold() -> None:
    [begun] = of(ev.RunStarted, Run().events)
    assert begun.held == []
    held = Run(held=["1.2.1"])
    [begun] = of(ev.RunStarted, held.events)
    assert begun.held == ["1.2.1"]
    assert held.state.excluded == ("1.2.1",)


def _failed_awaiting_assessment(run: Run) -> None:
    run.finish("1.1.1", "exit:1")
    assert run.state.task("1.1.1").awaiting == "assess"


def test_an_assessment_for_a_task_not_waiting_for_one_is_dropped() -> None:
    run = Run()
    events, effects = run.feed(
        AssessmentFinished(
            at=AT, task="1.1.1", assessment=Assessment(classification="adopt-partial")
        )
    )
    assert events == [] and effects == []


def test_an_assessment_is_recorded_and_salvage_follows_its_classification() -> None:
    run = Run()
    _failed_awaiting_assessment(run)
    assessment = Assessment(classification="adopt-partial", rationale="half the plan is done")
    events, _effects = run.feed(AssessmentFinished(at=AT, task="1.1.1", assessment=assessment))
    [recorded] = of(ev.AssessmentRecorded, events)
    assert recorded.assessment == assessment
    [requested] = of(ev.SalvageRequested, events)
    assert requested.classification == "adopt-partial"
    assert run.state.task("1.1.1").awaiting == "salvage"


def test_a_salvage_result_is_recorded_only_while_salvage_is_awaited() -> None:
    run = Run()
    result = SalvageResult(classification="adopt-partial", committed=["docs/execplans/1.md"])
    early, _ = run.feed(SalvageFinished(at=AT, task="1.1.1", salvage=result))
    assert "salvage-recorded" not in types(early)
    _failed_awaiting_assessment(run)
    run.feed(
        AssessmentFinished(
            at=AT, task="1.1.1", assessment=Assessment(classification="adopt-partial")
        )
    )
    events, _ = run.feed(SalvageFinished(at=AT, task="1.1.1", salvage=result))
    [recorded] = of(ev.SalvageRecorded, events)
    assert (recorded.task, recorded.salvage) == ("1.1.1", result)
    assert run.state.task("1.1.1").awaiting is None
    again, _ = run.feed(SalvageFinished(at=AT, task="1.1.1", salvage=result))
    assert "salvage-recorded" not in types(again)
    unknown, _ = run.feed(SalvageFinished(at=AT, task="9.9.9", salvage=result))
    assert unknown == []


def test_the_integration_record_keeps_the_report_and_the_fault() -> None:
    run = Run()
    _at_integrate(run)
    events, _ = run.feed(
        IntegrationFinished(at=AT, task="1.1.1", report=LANDED, fault="push timed out")
    )
    [recorded] = of(ev.IntegrationRecorded, events)
    assert (recorded.task, recorded.report, recorded.fault) == ("1.1.1", LANDED, "push timed out")
    [failed] = of(ev.TaskFailed, events)
    assert failed.stage == "integrate"
    assert failed.detail.endswith("before relaunching")


def test_a_gate_judge_recovery_opens_a_ticket_with_the_review_feedback() -> None:
    run = Run(max_review_rounds=10)
    _awaiting_judge(run)
    events, _ = run.feed(
        GateJudged(at=AT, task="1.1.1", stage="review", gate="review", decision="recover")
    )
    [ticket] = of(ev.TicketOpened, events)
    assert (ticket.origin, ticket.gate, ticket.route) == ("review", "review", "fix")
    assert "same finding" in ticket.reason


def test_closing_the_pull_request_of_an_infrastructure_faulted_task_changes_nothing() -> None:
    run = Run(stage_attempts=1)
    run.finish("1.1.1", "crash")
    assert run.status("1.1.1") == "infra-fault"
    events, _ = run.feed(PullClosed(at=AT, task="1.1.1", number=7, merged=False, by="bob"))
    assert "task-failed" not in types(events)


def test_closing_the_pull_request_of_a_task_not_started_fails_it_at_plan() -> None:
    run = Run()
    events, _ = run.feed(PullClosed(at=AT, task="1.1.2", number=9, merged=False, by="bob"))
    [failed] = of(ev.TaskFailed, events)
    assert (failed.task, failed.stage) == ("1.1.2", "plan")


def test_starting_fills_every_free_slot_and_no_more() -> None:
    roadmap = "## P\n- [ ] 1.1.1. A\n- [ ] 1.2.1. B\n- [ ] 1.3.1. C\n- [ ] 1.4.1. D\n"
    run = Run(roadmap=roadmap, max_parallel=3)
    started = [e.task for e in of(ev.TaskStarted, run.events)]
    assert started == ["1.1.1", "1.2.1", "1.3.1"]
    run.finish("1.1.1", "exit:1")  # a failure stops fan-out: 1.4.1 stays waiting
    assert run.status("1.4.1") == "pending"


def test_a_free_slot_skips_a_ready_task_that_is_no_longer_pending() -> None:
    roadmap = "## P\n- [ ] 1.1.1. A\n- [ ] 1.2.1. B\n- [ ] 1.3.1. C\n"
    run = Run(roadmap=roadmap, max_parallel=1)
    run.drive_to("1.1.1", "review")
    run.finish_stage("1.1.1")
    run.feed(IntegrationFinished(at=AT, task="1.1.1", report=LANDED))
    assert run.status("1.2.1") == "running"
    assert run.status("1.3.1") == "pending"
