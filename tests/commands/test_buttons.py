"""Check-run buttons: what a task's state offers, and what a click stands for."""

from __future__ import annotations

from typing import get_args

import pytest

from app.commands.buttons import actions_for, command_for_click, task_of_check
from app.core.moves import REARMABLE, RESTARTABLE
from app.core.offers import next_moves
from app.core.pipeline import TaskStatus
from tests.core.runkit import Run

STATUSES = get_args(TaskStatus)


@pytest.mark.parametrize("status", STATUSES, ids=list(STATUSES))
def test_buttons_fit_github_and_the_core_accepts_them(status: str) -> None:
    buttons = actions_for(status)
    assert len(buttons) <= 3
    for b in buttons:
        assert len(b.label) <= 20 and len(b.identifier) <= 20 and len(b.description) <= 40
        command = command_for_click(b.identifier, "1.2", "mona")
        assert command is not None and command.task == "1.2"
        if command.verb in ("retry", "recover", "complete"):
            assert status in RESTARTABLE
        if command.verb in ("force-start", "rearm"):
            assert status in REARMABLE
    if status in ("running", "landed"):
        assert buttons == []


def test_a_product_failure_s_first_button_continues_the_kept_work() -> None:
    run = Run()
    run.drive_to("1.1.1", "implement")
    run.finish("1.1.1", "exit:3")
    t = run.state.task("1.1.1")
    buttons = actions_for(t.status, next_moves(run.state, t))
    assert [(b.identifier, b.label) for b in buttons] == [
        ("recover", "Continue"),
        ("retry", "Start over"),
        ("complete", "Mark complete"),
    ]
    click = command_for_click("recover", "1.1.1", "mona")
    assert click is not None
    assert (click.verb, click.mode, click.task) == ("recover", "continue", "1.1.1")


def test_an_infrastructure_fault_s_first_button_starts_over() -> None:
    run = Run(stage_attempts=1)
    run.finish("1.1.1", "crash")
    t = run.state.task("1.1.1")
    buttons = actions_for(t.status, next_moves(run.state, t))
    assert [b.identifier for b in buttons] == ["retry", "recover", "complete"]
    assert buttons[0].description == "Start over from plan on a fresh branch"


def test_rerun_means_retry_and_a_click_names_who_completed() -> None:
    rerun = command_for_click("rerequested", "3.1", "mona")
    assert rerun is not None and rerun.verb == "retry" and rerun.task == "3.1"
    complete = command_for_click("complete", "3.1", "mona")
    assert complete is not None and "@mona" in complete.reason
    assert command_for_click("unknown", "3.1", "mona") is None


@pytest.mark.parametrize(
    ("name", "task"),
    [("ODW · 1.2.3", "1.2.3"), ("ODW · run", None), ("ODW · 1.2 · assessment", None), ("ci", None)],
    ids=["task-check", "run-check", "assessment-check", "foreign-check"],
)
def test_only_a_tasks_check_run_maps_to_a_task(name: str, task: str | None) -> None:
    assert task_of_check(name) == task
