"""A command's reply says what will run, where and from which stage, read from
what the core decided (not from what was asked), one sentence per move."""

from __future__ import annotations

from typing import Any

import pytest

from app.commands.grammar import CommandError, parse_line
from app.commands.host import Launch
from app.commands.said import launch_said, move_said
from app.core.discovery import SurvivorEvidence
from app.core.inputs import OperatorMove
from tests.core.runkit import AT, Run

KEPT = SurvivorEvidence(clean=True, commits=2, execplan="Status: IN PROGRESS\n")


def failed_at_implement() -> Run:
    run = Run()
    run.drive_to("1.1.1", "implement")
    run.finish("1.1.1", "exit:3")
    return run


def said(run: Run, move: str, task: str | None = "1.1.1", **kw: Any) -> str:
    op = OperatorMove(at=AT, move=move, task=task, by="mona", **kw)  # type: ignore[arg-type]
    events, effects = run.feed(op)
    return move_said(op, events, effects, run.state)


def test_retry_says_it_starts_over_from_plan_on_a_fresh_branch_and_where_the_old_work_is() -> None:
    text = said(failed_at_implement(), "retry")
    assert text == (
        "restarting 1.1.1 from plan on a fresh `roadmap-1-1-1` from the tip of `main`; "
        "the previous attempts are kept on `odw-kept/roadmap-1-1-1/retry-1` "
        "(dispatched now, retry 1)."
    )


def test_recover_says_which_stage_and_why() -> None:
    text = said(failed_at_implement(), "recover", evidence=KEPT)
    assert text == (
        "continuing 1.1.1 from its kept work on `roadmap-1-1-1` at implement "
        "(its ExecPlan says `Status: IN PROGRESS`) (dispatched now, retry 1)."
    )


def test_rearm_says_the_override_and_where_it_continues() -> None:
    text = said(
        failed_at_implement(),
        "rearm",
        overrides={"gateRetryBudget": {"build": 4}, "instructions": "use the cache"},
        evidence=KEPT,
    )
    assert text.startswith(
        "re-armed 1.1.1 with `gateRetryBudget.build=4 instructions=(13 characters)`; "
        "continuing from its kept work on `roadmap-1-1-1` at implement"
    )
    assert "use the cache" not in text


def test_complete_says_what_it_accepted_and_what_comes_next() -> None:
    text = said(failed_at_implement(), "complete", reason="fixed by hand")
    assert text == "accepted implement of 1.1.1 as passed; going on to gates."


def test_halt_and_resume_say_what_stops_and_what_starts() -> None:
    run = Run(max_parallel=1)
    assert said(run, "halt", task=None) == (
        "halted run `r`: nothing new is dispatched and running stages finish; "
        "`/odw resume` undoes it."
    )
    run.finish("1.1.1")  # suspended: the halt holds the next stage back
    assert said(run, "resume", task=None) == "resumed run `r`; dispatched 1.1.1."


def test_force_start_says_it_runs_before_its_dependencies() -> None:
    run = Run(max_parallel=2)
    assert said(run, "force-start", task="1.1.2") == (
        "force-started 1.1.2 before its dependencies: plan on `roadmap-1-1-2` (dispatched now)."
    )


def test_a_bare_rearm_is_refused_with_its_usage() -> None:
    with pytest.raises(CommandError) as caught:
        parse_line("/odw rearm 1.2.3")
    assert "at least one override" in caught.value.problem
    assert caught.value.usage == "/odw rearm ID key=value..."


def test_recover_with_an_id_continues_and_without_one_only_assesses() -> None:
    assert parse_line("/odw recover 1.2").mode == "continue"
    assert parse_line("/odw recover").mode == "assess"
    assert parse_line("/odw recover review 1.2").mode == "review"
    assert parse_line("/odw recover", default_task="1.2").mode == "continue"


@pytest.mark.parametrize(
    ("launch", "said"),
    [
        (
            Launch("mona", resume_mode="continue", resume_task="1.2"),
            "starting a new run on `main` that continues 1.2 from the kept work at the "
            "stage each ExecPlan's Status names",
        ),
        (
            Launch("mona", resume_mode="assess"),
            "starting a new run on `main` that assesses every surviving branch and changes nothing",
        ),
        (
            Launch("mona", dry_run=True, task="1.2"),
            "starting a dry run (nothing is dispatched or written) of task 1.2 only on `main`",
        ),
        (Launch("mona", max_parallel=3), "starting a run on `main`, at most 3 at a time"),
    ],
    ids=["recover-one-task", "assess-all", "dry-run-one-task", "run"],
)
def test_a_launch_says_what_the_new_run_will_do(launch: Launch, said: str) -> None:
    assert launch_said(launch, "main") == said
