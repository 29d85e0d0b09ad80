"""A task's check run and status comment explain themselves (issue 28 item 4):
a stage table with result, attempts, time and job per stage (per lane for the
dual review), the verdict's exit codes, the failing gate's telling line in the
check text and the comment, and a landing said as its commit."""

from __future__ import annotations

from app.apphost import views
from app.core.inputs import IntegrationFinished
from app.core.integration import IntegrationReport
from app.core.telling import telling_line
from app.core.verdict import Check, GateResult, Verdict
from tests.core.runkit import AT, Run
from tests.core.test_telling_line import MAKE_PYTEST

JOB = "https://github.com/octo/demo/actions/runs/7/job/70"


def _gate_failed_twice() -> tuple[Run, Verdict]:
    run = Run(maxParallel=1, gateRetryBudget=0)
    run.drive_to("1.1.1", "implement")
    reason = f"make test exited 2: {telling_line(MAKE_PYTEST)}"
    run.finish("1.1.1", f"gate:build:{reason}")
    run.finish("1.1.1", f"gate:build:{reason}")
    assert run.status("1.1.1") == "failed"
    latest = Verdict(
        stage="implement",
        task="1.1.1",
        token="t" * 12,
        passed=False,
        exit_code=0,
        checks=[
            Check(name="exit_code", status="passed", reason="agent exited cleanly", code=0),
            Check(name="gates", status="failed", reason="failed: make test"),
        ],
        gates=[GateResult(command="make test", code=2, status="failed", tail=MAKE_PYTEST)],
    )
    return run, latest


def _row(summary: str, stage: str) -> list[str]:
    line = next(x for x in summary.splitlines() if x.startswith(f"| {stage}"))
    return [c.strip() for c in line.strip("|").split("|")]


def test_a_failed_gate_is_shown_with_its_stage_attempts_time_job_and_telling_line() -> None:
    run, latest = _gate_failed_twice()
    t = run.state.task("1.1.1")
    links = views.Links(
        stage_jobs={"1.1.1": {"implement": JOB}}, times={"1.1.1": {"implement": 250.0}}
    )
    check = views.task_check(run.state, t, links, latest)
    told = telling_line(MAKE_PYTEST)
    assert _row(check.summary, "implement") == [
        "implement",
        "failed: `make test` exit 2",
        "2",
        "4m",
        f"[job]({JOB})",
    ]
    assert _row(check.summary, "plan")[1] == "passed"
    # The verdict's checks carry exit codes; the gate row names its telling line.
    assert _row(check.summary, "exit_code")[:3] == ["exit_code", "passed", "0"]
    gate = _row(check.summary, "gate `make test`")
    assert gate[1:3] == ["failed", "2"] and "test_charge_repeats" in gate[3]
    # The output tail is in <details>, its summary line quoting the telling line.
    assert check.text is not None and "<details><summary>make test: exit 2 — " in check.text
    assert f"— {told}</summary>" in check.text
    # The status comment summarises the failing gate in one line.
    comment = views.status_comment(run.state, t, links, latest, landed_note=False)
    assert "**Status:** failed at gates" in comment
    line = next(x for x in comment.splitlines() if x.startswith("**Failing gate:**"))
    assert "`make test` exit 2" in line and told in line


def test_the_two_review_lanes_are_two_rows_not_a_second_attempt() -> None:
    run = Run(maxParallel=1)
    run.drive_to("1.1.1", "review")
    run.finish("1.1.1", "pass", lane="a")
    t = run.state.task("1.1.1")
    summary = views.task_check(run.state, t, views.Links(), None).summary
    rows = [x for x in summary.splitlines() if x.startswith("| review")]
    assert [r.split("|")[1].strip() for r in rows] == [
        "review (lane a) ← current",
        "review (lane b) ← current",
    ]
    assert all(r.split("|")[3].strip() == "1" for r in rows), rows


def test_a_landed_task_says_landed_as_its_commit_not_at_integrate() -> None:
    run = Run(maxParallel=1)
    for _ in range(20):
        if run.state.task("1.1.1").awaiting == "integrate":
            break
        run.finish_stage("1.1.1")
    sha = "a1b2c3d4e5f6" + "0" * 28
    run.feed(
        IntegrationFinished(
            at=AT, task="1.1.1", report=IntegrationReport.landed(sha=sha, attempts=1)
        )
    )
    t = run.state.task("1.1.1")
    assert t.status == "landed"
    check = views.task_check(run.state, t, views.Links(), None)
    comment = views.status_comment(run.state, t, views.Links(), None, landed_note=True)
    assert check.title == f"landed as {sha[:12]}"
    assert f"**Status:** landed as {sha[:12]}" in comment
    assert "landed at integrate" not in comment and "at integrate" not in check.summary
