"""What a person is shown about a run and its tasks (`app.core.run_view`), the one
model the App posts on GitHub and local mode prints: each line here is a
decision a renderer must not make again."""

from __future__ import annotations

import pytest

from app.core.inputs import EndRun, IntegrationFinished
from app.core.integration import IntegrationReport
from app.core.run_view import TaskView, run_view, task_conclusion, task_view
from tests.core.runkit import AT, Run

LANDED = IntegrationReport(
    ok=True, rebased=True, squash_merged=True, pushed=True, roadmap_marked_done=True, sha="a" * 40
)


def _view(run: Run, task: str = "1.1.1") -> TaskView:
    return task_view(run.state, run.state.task(task))


def test_a_running_task_says_its_stage_and_attempt_and_offers_no_move() -> None:
    run = Run(stage_attempts=3)
    run.finish("1.1.1", "crash")  # an infra fault: the stage runs again
    v = _view(run)
    assert v.head == "running plan (attempt 2)"
    assert v.conclusion is None and v.failure is None and v.moves == ()
    assert [(r.stage, r.attempts, r.current) for r in v.stages] == [("plan", 2, True)]
    assert (v.title, v.branch) == ("First", "roadmap-1-1-1")  # the roadmap's headline


def test_a_landed_task_says_its_squash_commit() -> None:
    run = Run()
    run.drive_to("1.1.1", "review")
    run.finish_stage("1.1.1")
    run.feed(IntegrationFinished(at=AT, task="1.1.1", report=LANDED))
    v = _view(run)
    assert (v.head, v.conclusion, v.landed_sha) == ("landed as aaaaaaaaaaaa", "success", "a" * 40)
    assert not any(r.current for r in v.stages)


def test_a_failed_tasks_head_cuts_a_long_detail_and_says_so() -> None:
    run = Run()
    run.finish("1.1.1", "exit:1")
    run.state.task("1.1.1").detail = "x" * 200
    head = _view(run).head
    assert head.startswith("failed at plan: " + "x" * 80)
    assert "120 characters cut" in head


@pytest.mark.parametrize(
    ("status", "conclusion"),
    [
        ("landed", "success"),
        ("failed", "failure"),
        ("infra-fault", "failure"),
        ("deferred", "action_required"),
        ("manual-merge-ready", "action_required"),
        ("blocked", "neutral"),
        ("running", None),
        ("pending", None),
    ],
    ids=lambda x: str(x),
)
def test_a_tasks_conclusion_follows_its_status(status: str, conclusion: str | None) -> None:
    assert task_conclusion(status) == conclusion


def test_a_deferred_task_offers_moves_but_names_no_failure() -> None:
    run = Run()
    run.finish("1.1.1", "provider:529")
    v = _view(run)
    assert v.status == "deferred"
    assert [m.move for m in v.moves] == ["retry", "recover", "complete"]
    assert v.moves[2].usage == ' --reason "..."'
    assert v.failure is None


def test_the_run_title_counts_landed_failed_and_running_tasks() -> None:
    run = Run(stage_attempts=1, max_parallel=2)
    v = run_view(run.state)
    assert v.title == "0 of 4 landed · 2 running"
    assert v.conclusion is None
    run.finish("1.1.1", "exit:1")
    v = run_view(run.state)
    assert v.failed == ("1.1.1",)
    assert v.title == "0 of 4 landed · 1 failed (1.1.1) · 1 running · halted"
    assert v.halted is not None and v.halted.startswith("task 1.1.1 failed at plan")
    assert v.conclusion is None  # 1.2.1 still runs


def test_a_stopped_run_with_nothing_running_asks_for_action_then_ends_in_failure() -> None:
    run = Run(stage_attempts=1, max_parallel=1)
    run.finish("1.1.1", "exit:1")
    assert run_view(run.state).conclusion == "action_required"
    run.feed(EndRun(at=AT))
    assert run_view(run.state).conclusion == "failure"


def test_a_run_that_ends_clean_succeeds() -> None:
    run = Run(roadmap="## P\n- [ ] 1.1.1. Only\n")
    run.drive_to("1.1.1", "review")
    run.finish_stage("1.1.1")
    run.feed(IntegrationFinished(at=AT, task="1.1.1", report=LANDED))
    run.feed(EndRun(at=AT))
    v = run_view(run.state)
    assert (v.title, v.conclusion, v.halted) == ("1 of 1 landed", "success", None)
    assert dict(v.fault_metrics) == {
        "authFaults": 0,
        "infraFaults": 0,
        "infraRetries": 0,
        "providerFaults": 0,
    }


def test_a_dry_run_says_what_a_real_run_would_start() -> None:
    v = run_view(Run(dry_run=True).state)
    assert v.would_start is not None and v.would_start[0] == "1.1.1"
    assert v.title.startswith("dry run: would start 1.1.1")
    assert run_view(Run().state).would_start is None


def test_operator_moves_show_who_made_them_and_why_one_was_refused() -> None:
    run = Run()
    run.move("halt", reason="freeze")
    run.move("retry", task="1.1.1")  # running: refused
    rows = run_view(run.state).moves
    assert (rows[0].what, rows[0].by, rows[0].refused) == ("halt", "maintainer", "")
    assert rows[1].what == "retry 1.1.1" and rows[1].refused.startswith("refused: ")
