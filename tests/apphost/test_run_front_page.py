"""`ODW · run` as the run's front page and the `/odw status` reply, from state:
why each task waits, links to its PR, check and job, and what to type."""

from __future__ import annotations

from app.apphost import views
from app.apphost.status_reply import run_status, task_status
from app.core.offers import next_moves
from tests.core.runkit import Run

CHAIN = "# R\n\n- [ ] 1.1. Greet\n- [ ] 1.2. Wave\n  - Requires 1.1.\n- [ ] 1.3. Bow\n"
PR, CHECK, JOB = (
    "https://github.example/octo/demo/pull/7",
    "https://github.example/octo/demo/runs/41",
    "https://github.example/octo/demo/actions/runs/9/job/3",
)


def _failed() -> Run:
    """1.1 failed at plan; 1.2 is parked on it; the run stopped for a person."""
    run = Run(CHAIN, stage_attempts=1, maxParallel=1)
    run.finish("1.1", "exit:1")
    return run


def test_the_run_check_says_why_each_task_waits_links_it_and_what_to_type() -> None:
    run = _failed()
    links = views.Links(pulls={"1.1": PR}, checks={"1.1": CHECK}, jobs={"1.1": JOB})
    summary = views.run_check(run.state, links).summary
    rows = {line.split(" | ")[0][2:]: line for line in summary.splitlines() if line[:4] == "| 1."}
    assert "parked: depends on 1.1, which did not land" in rows["1.2"]
    assert f"[PR]({PR})" in rows["1.1"] and f"[check]({CHECK})" in rows["1.1"]
    assert f"[job]({JOB})" in rows["1.1"]
    assert "failed at plan" in rows["1.1"]
    nexts = summary.split("**Next:**")[1].split("\n\n")[0]
    # The commands are the task's own moves (one table: `offers.next_moves`).
    for move in next_moves(run.state, run.state.task("1.1")):
        assert f"`/odw {move.move} 1.1{move.usage}`" in nexts
    assert "/odw resume" not in nexts  # not an operator's halt


def test_an_operators_halt_offers_resume_on_the_run_check_and_in_status() -> None:
    run = Run(CHAIN, maxParallel=1)
    run.drive_to("1.1", "implement")
    run.move("halt")
    run.finish("1.1", "exit:1")
    assert "`/odw resume`" in views.run_check(run.state, views.Links()).summary
    assert "`/odw resume`" in run_status(run.state, "main")


def test_status_names_the_failed_task_and_the_commands_to_type() -> None:
    run = _failed()
    said = run_status(run.state, "main")
    first, *rest = said.splitlines()
    assert "1 failed" in first and "**halted**" in first
    failed = next(line for line in rest if line.startswith("- **1.1**"))
    assert "failed at plan" in failed and "`/odw " in failed
    assert any("parked: depends on 1.1" in line for line in rest)
    one = task_status(run.state, "1.1")
    assert "**failed**" in one and "**Next:**" in one and "`/odw " in one


def test_a_running_run_says_no_commands() -> None:
    run = Run(CHAIN, maxParallel=2)
    run.drive_to("1.1", "implement")
    summary = views.run_check(run.state, views.Links()).summary
    assert "**Next:**" not in summary
    assert "| 1.1 | running |" in summary


def test_a_running_tasks_stages_and_heads_do_not_edit_the_run_check() -> None:
    """The front page changes when a task's status does: a new stage, job or
    branch head of a running task is on its own check run, one click away."""
    run = Run(CHAIN, maxParallel=1)
    repo = PR.rsplit("/pull/", 1)[0]
    run.drive_to("1.1", "design-review")
    before = views.run_check(run.state, views.Links(repository_url=repo))
    run.drive_to("1.1", "gates")
    after = views.run_check(
        run.state,
        views.Links(
            pulls={"1.1": PR}, checks={"1.1": CHECK}, jobs={"1.1": JOB}, repository_url=repo
        ),
    )
    assert after.digest() == before.digest()
    # The PR by a search for the task's branch, a link that does not move.
    assert f"[PR]({repo}/pulls?q=is%3Apr%20head%3Aroadmap-1-1)" in after.summary
    assert "running** at gates" in task_status(run.state, "1.1")  # `/odw status 1.1` says it
