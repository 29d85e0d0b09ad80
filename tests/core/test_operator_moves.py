"""Operator moves: each is an event with who and why, and each does what it says."""

from __future__ import annotations

import pytest

from app.core import events as ev
from app.core.effects import DispatchStage, Integrate
from app.core.inputs import IntegrationFinished
from app.core.integration import IntegrationReport
from tests.core.runkit import AT, Run, of


def _failed_chain() -> Run:
    run = Run(maxParallel=1)
    run.drive_to("1.1.1", "implement")
    run.finish("1.1.1", "no-marker")
    return run


def test_retry_clears_verdict_releases_dependents_and_restarts_from_plan():
    run = _failed_chain()
    assert run.status("1.1.2") == "blocked"
    events, effects = run.move("retry", "1.1.1")
    retried = of(ev.TaskRetried, events)[0]
    assert (retried.by, retried.reason) == ("maintainer", "test")
    assert {e.task for e in of(ev.TaskReleased, events)} == {"1.1.2", "1.1.3"}
    assert of(ev.StopLifted, events)
    t = run.state.task("1.1.1")
    assert t.verdict is None and t.status == "running" and t.stage == "plan"
    assert [d.stage for d in of(DispatchStage, effects)] == ["plan"]


def test_rearm_carries_corrected_fields_into_the_next_dispatch():
    run = _failed_chain()
    run.move("rearm", "1.1.1", overrides={"instructions": "use the v2 API", "model": "big"})
    d = run.live("1.1.1")
    assert d.extras["instructions"] == "use the v2 API" and d.extras["model"] == "big"
    assert run.status("1.1.2") == "pending"


def test_rearm_rejects_unknown_fields_and_changes_nothing():
    run = _failed_chain()
    events, effects = run.move("rearm", "1.1.1", overrides={"colour": "red"})
    assert [type(e) for e in events] == [ev.MoveRejected]
    assert "colour" in events[0].why
    assert run.status("1.1.1") == "failed" and not effects


def test_complete_records_a_manual_pass_and_the_pipeline_continues():
    run = _failed_chain()
    events, effects = run.move("complete", "1.1.1")
    manual = of(ev.StageCompletedManually, events)[0]
    assert manual.stage == "implement"
    assert [c.name for c in manual.checks] == ["manual"]
    assert "no verification was performed" in manual.checks[0].reason
    assert [d.stage for d in of(DispatchStage, effects)] == ["gates"]
    assert run.status("1.1.2") == "pending"


def test_complete_at_integrate_lands_a_manual_merge():
    run = Run(maxParallel=1, autoMerge=False)
    run.drive_to("1.1.1", "review")
    run.finish_stage("1.1.1")
    run.move("complete", "1.1.1")
    assert run.status("1.1.1") == "landed"
    assert "1.1.2" in run.state.ready(), "a manual merge counts as landed for dependents"


def test_force_start_dispatches_a_task_whose_dependencies_are_open():
    run = Run(maxParallel=1)
    events, effects = run.move("force-start", "1.1.3")
    assert of(ev.TaskForceStarted, events)[0].by == "maintainer"
    assert run.state.task("1.1.3").forced
    assert [(d.task, d.stage) for d in of(DispatchStage, effects)] == [("1.1.3", "plan")]


def test_halt_stops_every_dispatch_and_resume_continues_where_it_stopped():
    run = Run(maxParallel=1)
    run.move("halt", reason="investigating")
    assert run.state.stop.reason == "halted by maintainer: investigating"
    _, effects = run.finish("1.1.1", "pass")
    assert not of(DispatchStage, effects)
    assert run.state.task("1.1.1").resume_at == "design-review"
    _, effects = run.move("resume")
    assert [d.stage for d in of(DispatchStage, effects)] == ["design-review"]


def test_moves_that_do_not_fit_are_rejected_with_a_reason():
    run = Run(maxParallel=1)
    events, _ = run.move("retry", "1.1.1")
    assert "running" in of(ev.MoveRejected, events)[0].why
    events, _ = run.move("retry", "9.9.9")
    assert "no open task" in of(ev.MoveRejected, events)[0].why
    events, _ = run.move("resume")
    assert of(ev.MoveRejected, events)
    run.move("halt")
    events, _ = run.move("force-start", "1.2.1")
    assert "halted" in of(ev.MoveRejected, events)[0].why


def test_retry_of_a_landed_dependency_chain_lands_everything():
    run = _failed_chain()
    run.move("retry", "1.1.1")
    for task in ("1.1.1", "1.1.2", "1.1.3", "1.2.1"):
        for _ in range(12):
            _, effects = run.finish_stage(task)
            if of(Integrate, effects):
                break
        run.feed(
            IntegrationFinished(
                at=AT,
                task=task,
                report=IntegrationReport(
                    ok=True, rebased=True, squash_merged=True, pushed=True, roadmap_marked_done=True
                ),
            )
        )
    assert [run.status(t) for t in ("1.1.1", "1.1.2", "1.1.3", "1.2.1")] == ["landed"] * 4
    assert run.state.landed == ["1.1.1", "1.1.2", "1.1.3", "1.2.1"]


@pytest.mark.parametrize(
    ("overrides", "field"),
    [
        ({"gateRetryBudget": {"bulid": 5}}, "rearm.gateRetryBudget"),
        ({"gateRetryBudget": -1}, "rearm.gateRetryBudget"),
        ({"routeBudget": {"deploy": 1}}, "rearm.routeBudget"),
        ({"stageAttempts": 0}, "rearm.stageAttempts"),
        ({"stageAttempts": 11}, "rearm.stageAttempts"),
        ({"model": 3}, "rearm.model"),
        ({"colour": "red"}, "rearm.colour"),
    ],
    ids=[
        "typo-gate",
        "negative-budget",
        "unknown-stage",
        "zero-attempts",
        "too-many",
        "model",
        "unknown",
    ],
)
def test_rearm_checks_overrides_with_the_run_config_rules(overrides, field):
    run = _failed_chain()
    events, effects = run.move("rearm", "1.1.1", overrides=overrides)
    assert [type(e) for e in events] == [ev.MoveRejected]
    assert events[0].why.startswith(field + ":")
    assert run.status("1.1.1") == "failed" and not effects
