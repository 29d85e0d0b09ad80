"""The moves every handler shares (`flow.py`), field by field: what a dispatch
carries, what a failure shows and stops, what a hard stop suspends, how a ticket
returns to its origin and what a manual merge waits for."""

from __future__ import annotations

from app.core import events as ev
from app.core.effects import DispatchStage, Integrate
from app.core.inputs import IntegrationFinished
from app.core.keys import attempt_key
from app.core.run_view import task_view
from tests.core.runkit import AT, Run, of, types


def test_a_dispatch_carries_what_the_runner_needs() -> None:
    run = Run(stage_deadlines={"plan": 600})
    d = run.live("1.1.1")
    assert d.key == attempt_key("r", "1.1.1", "plan", 1, "")
    assert (d.task, d.stage, d.lane, d.base) == ("1.1.1", "plan", "", "main")
    assert d.writes is True
    assert d.deadline_seconds == 600
    run.finish("1.1.1", "pass")
    review = run.live("1.1.1")
    assert (review.stage, review.writes, review.deadline_seconds) == ("design-review", False, 1800)
    [dispatched] = [e for e in of(ev.StageDispatched, run.events) if e.stage == "design-review"]
    assert (dispatched.attempt, dispatched.token) == (1, review.token)


def test_a_failure_shows_what_failed_the_kept_branch_and_the_way_back() -> None:
    run = Run()
    run.finish("1.1.1", "exit:3")
    view = task_view(run.state, run.state.task("1.1.1"))
    assert view.failure is not None
    assert view.failure.startswith("Task 1.1.1 failed at plan: ")
    assert view.failure.endswith("The branch roadmap-1-1-1 is kept.")
    [failed] = of(ev.TaskFailed, run.events)
    assert failed.detail in view.failure
    first = view.moves[0]
    assert (first.move, first.says) == (
        "recover",
        "continue from the kept work on `roadmap-1-1-1` at the stage its ExecPlan's Status names",
    )
    assert [m.move for m in view.moves] == ["recover", "retry", "complete"]
    assert (view.head, view.conclusion) == (f"failed at plan: {failed.detail}", "failure")
    [stopped] = of(ev.RunStopped, run.events)
    assert stopped.kind == "failure"
    assert stopped.reason.startswith("task 1.1.1 failed at plan: ")


def test_an_auth_failure_stops_everything_until_credentials_are_fixed() -> None:
    run = Run()
    run.finish("1.1.1", "auth")
    [stopped] = of(ev.RunStopped, run.events)
    assert stopped.kind == "auth"
    assert stopped.reason.startswith("task 1.1.1 auth failure at plan: ")
    assert "fix the credentials, then resume" in stopped.reason
    assert run.state.stop is not None and run.state.stop.hard
    # The other task's next stage is suspended, not dispatched.
    run.finish("1.2.1", "pass")
    [suspended] = of(ev.TaskSuspended, run.last[0])
    assert suspended.task == "1.2.1"
    assert suspended.stage == "design-review"
    assert suspended.detail.startswith("run stopped before design-review: task 1.1.1 auth")


def test_a_halt_suspends_a_retry_where_it_stands() -> None:
    run = Run(stage_attempts=3)
    run.move("halt", reason="deploy freeze")
    events, effects = run.finish("1.1.1", "crash")
    [suspended] = of(ev.TaskSuspended, events)
    assert (
        suspended.detail == "run stopped before retrying plan: halted by maintainer: deploy freeze"
    )
    assert not of(DispatchStage, effects)
    assert run.state.task("1.1.1").resume_at == "plan"


def test_a_failure_parks_every_waiting_task_behind_it() -> None:
    run = Run()
    run.finish("1.1.1", "exit:1")
    parked = {(e.task, e.because) for e in of(ev.TaskParked, run.events)}
    assert parked == {("1.1.2", "1.1.1"), ("1.1.3", "1.1.1")}
    assert run.status("1.2.1") == "running"


def test_a_retry_releases_the_parked_tasks_and_lifts_the_stop() -> None:
    run = Run()
    run.finish("1.1.1", "exit:1")
    events, _ = run.move("retry", "1.1.1", reason="flaky network")
    assert {e.task for e in of(ev.TaskReleased, events)} == {"1.1.2", "1.1.3"}
    [lifted] = of(ev.StopLifted, events)
    assert lifted.reason == "no failed or deferred task remains"
    assert run.state.stop is None


def test_a_retry_keeps_the_stop_while_another_task_has_failed() -> None:
    run = Run()
    run.finish("1.1.1", "exit:1")
    run.finish("1.2.1", "exit:1")
    events, _ = run.move("retry", "1.1.1")
    assert "stop-lifted" not in types(events)
    assert run.state.stop is not None


def test_a_retry_never_lifts_an_operator_halt() -> None:
    run = Run()
    run.finish("1.1.1", "exit:1")
    run.move("halt", reason="hold")
    events, _ = run.move("retry", "1.1.1")
    assert "stop-lifted" not in types(events)
    assert run.state.stop is not None and run.state.stop.kind == "operator"


def test_with_auto_merge_off_a_reviewed_task_waits_for_a_person() -> None:
    run = Run(auto_merge=False)
    run.drive_to("1.1.1", "review")
    events, effects = run.finish_stage("1.1.1")
    [ready] = of(ev.TaskManualMergeReady, events)
    assert ready.task == "1.1.1"
    assert "autoMerge is off" in ready.detail and "`complete`" in ready.detail
    assert not of(Integrate, effects)
    assert "integration-requested" not in types(events)


def test_with_auto_merge_on_a_reviewed_task_is_integrated() -> None:
    run = Run()
    run.drive_to("1.1.1", "review")
    events, effects = run.finish_stage("1.1.1")
    [integrate] = of(Integrate, effects)
    assert integrate.task == "1.1.1"
    assert of(ev.IntegrationRequested, events)[0].task == "1.1.1"


def test_a_ticket_routes_to_a_writer_and_returns_to_its_origin() -> None:
    run = Run()
    run.drive_to("1.1.1", "gates")
    # The gates stage only reads: a build failure there opens a ticket for a writer.
    events, _ = run.finish("1.1.1", "gate:build:cannot compile")
    [ticket] = of(ev.TicketOpened, events)
    assert (ticket.ticket, ticket.origin, ticket.gate, ticket.route) == (1, "gates", "build", "fix")
    assert (ticket.category, ticket.capability) == ("build-broken", "write")
    fix = run.live("1.1.1")
    assert fix.stage == "fix"
    assert fix.extras["ticket"] == "build-broken from gates: cannot compile"
    events, _ = run.finish("1.1.1", "pass")
    [closed] = of(ev.TicketClosed, events)
    assert (closed.ticket, closed.origin) == (1, "gates")
    [entered] = of(ev.StageEntered, events)
    assert (entered.stage, entered.previous) == ("gates", "fix")
    assert run.live("1.1.1").stage == "gates"


def test_an_infrastructure_fault_at_integrate_is_never_salvaged() -> None:
    run = Run()
    run.drive_to("1.1.1", "review")
    run.finish_stage("1.1.1")
    events, _ = run.feed(IntegrationFinished(at=AT, task="1.1.1", fault="lost"))
    assert "salvage-requested" not in types(events)
    assert "assessment-requested" not in types(events)
