"""What `odw run --local` prints as its run goes: a task's view when it fails, the
run's view when it ends (the core's views, the same the App posts on GitHub)."""

from __future__ import annotations

import io

from rich.console import Console

from app.core import events as ev
from app.core.inputs import EndRun
from app.local.progress import ProgressView
from tests.core.runkit import AT, Run


def _printed(view: ProgressView) -> list[str]:
    out = view.console.file
    assert isinstance(out, io.StringIO)
    return out.getvalue().splitlines()


def _view(*, report: bool = True) -> ProgressView:
    console = Console(file=io.StringIO(), width=300, color_system=None)
    return ProgressView(enabled=False, report=report, console=console)


def _feed(view: ProgressView, run: Run, since: int) -> int:
    view.feed([ev.event_to_json(e) for e in run.events[since:]])
    return len(run.events)


def test_a_failure_prints_the_tasks_view_once_and_the_end_prints_the_runs() -> None:
    run, view = Run(stage_attempts=1, max_parallel=1), _view()
    seen = _feed(view, run, 0)
    assert _printed(view) == []  # nothing failed yet
    run.finish("1.1.1", "exit:3")
    seen = _feed(view, run, seen)
    detail = run.state.task("1.1.1").detail
    assert _printed(view) == [
        f"task 1.1.1 First: failed at plan: {detail}",
        "  last attempt: plan #1 failed",
        f"  Task 1.1.1 failed at plan: {detail}. The branch roadmap-1-1-1 is kept.",
    ]
    run.feed(EndRun(at=AT))
    _feed(view, run, seen)
    assert _printed(view)[3:] == [
        "run r on main: 0 of 4 landed · 1 failed (1.1.1) · halted",
        f"  halted: task 1.1.1 failed at plan: {detail}",
        "  faults: authFaults 0, infraFaults 0, infraRetries 0, providerFaults 0",
        "  needs remediation: 1.1.1 failed with no fault to explain it",
    ]


def test_a_retried_task_that_fails_again_is_reported_again() -> None:
    run, view = Run(stage_attempts=1, max_parallel=1), _view()
    run.finish("1.1.1", "exit:1")
    seen = _feed(view, run, 0)
    run.move("retry", task="1.1.1")
    run.finish("1.1.1", "exit:2")
    _feed(view, run, seen)
    heads = [line for line in _printed(view) if line.startswith("task 1.1.1 ")]
    assert len(heads) == 2


def test_terminal_escapes_in_a_detail_are_not_printed() -> None:
    run, view = Run(stage_attempts=1), _view()
    run.finish("1.1.1", "exit:1")
    run.state.task("1.1.1").detail = "boom \x1b[31mred\x1b[0m [bold]x[/bold]"
    failed = ev.TaskFailed(
        at=AT, task="1.1.1", stage="plan", status="failed", detail=run.state.task("1.1.1").detail
    )
    view.feed([ev.event_to_json(e) for e in [*run.events[:-1], failed]])
    text = "\n".join(_printed(view))
    assert "\x1b" not in text
    assert "boom red [bold]x[/bold]" in text  # rich markup is printed as text


def test_without_report_nothing_is_printed() -> None:
    run, view = Run(stage_attempts=1), _view(report=False)
    run.finish("1.1.1", "exit:1")
    run.feed(EndRun(at=AT))
    _feed(view, run, 0)
    assert _printed(view) == []
