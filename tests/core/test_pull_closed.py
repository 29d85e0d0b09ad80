"""A task's pull request merged or closed by a person on GitHub (the App's `PullClosed`)."""

from __future__ import annotations

from app.core import events as ev
from app.core.effects import DispatchStage
from app.core.inputs import PullClosed, StageFinished
from app.engine.driver import replay
from tests.core.runkit import AT, Run, of, types


def closed(task: str, merged: bool, by: str = "maintainer") -> PullClosed:
    return PullClosed(
        at=AT, task=task, number=7, merged=merged, sha="abc123" if merged else None, by=by
    )


def test_a_merge_by_a_person_lands_the_task_and_its_dependents_go_on() -> None:
    run = Run(maxParallel=1)
    run.drive_to("1.1.1", "review")
    events, effects = run.feed(closed("1.1.1", merged=True))
    assert types(events)[0] == "task-merged-by-person"
    t = run.state.task("1.1.1")
    assert (t.status, t.landed_sha, t.live) == ("landed", "abc123", {})
    assert "merged by maintainer" in t.detail
    # The dependent starts: its dependency landed.
    assert [d.task for d in of(DispatchStage, effects)] == ["1.1.2"]


def test_the_late_answer_of_a_stage_the_merge_overtook_is_ignored() -> None:
    run = Run(maxParallel=1)
    run.drive_to("1.1.1", "review")
    lanes = list(run.state.task("1.1.1").live)
    stale = {lane: run.live("1.1.1", lane) for lane in lanes}
    run.feed(closed("1.1.1", merged=True))
    before = run.state.task("1.1.1").status
    run.dispatched.update({("1.1.1", lane): d for lane, d in stale.items()})
    d = stale[lanes[0]]
    _, effects = run.feed(
        StageFinished(at=AT, task=d.task, stage=d.stage, token=d.token, verdict=None)
    )
    assert run.state.task("1.1.1").status == before == "landed"
    assert not of(DispatchStage, [e for e in effects if e.task == "1.1.1"])


def test_a_close_without_merge_stops_the_task_and_parks_its_dependents() -> None:
    run = Run(maxParallel=1)
    run.drive_to("1.1.1", "implement")
    run.feed(closed("1.1.1", merged=False))
    assert run.status("1.1.1") == "failed"
    assert "closed unmerged by maintainer" in run.state.task("1.1.1").detail
    assert run.status("1.1.2") == "blocked"
    assert run.state.stop is not None


def test_a_closed_pr_of_a_landed_task_changes_nothing() -> None:
    run = Run(maxParallel=1)
    run.feed(closed("1.2.1", merged=True))
    events, effects = run.feed(closed("1.2.1", merged=False))
    assert not events and not effects


def test_the_merge_event_replays_to_the_same_state() -> None:
    run = Run(maxParallel=1)
    run.drive_to("1.1.1", "gates")
    run.feed(closed("1.1.1", merged=True))
    again = replay([ev.event_to_json(e) for e in run.events])
    assert again.task("1.1.1").status == "landed"
    assert again.landed == run.state.landed
