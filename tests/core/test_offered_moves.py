"""The moves offered for a stopped task fit the failure, and each does what its
words say: `recover` continues the kept work at the stage its ExecPlan's Status
names, `retry` starts over from plan on a fresh branch (the old work kept
aside), `rearm` needs an override; attempts are counted per retry cycle."""

from __future__ import annotations

import pytest

from app.core import events as ev
from app.core.discovery import SurvivorEvidence
from app.core.effects import DispatchStage
from app.core.offers import next_moves
from app.core.run_view import task_view
from tests.core.runkit import Run, of

PLAN = "Status: {status}\n\n# 1.1.1\n"


def kept(status: str, commits: int = 2) -> SurvivorEvidence:
    """What the host reads on a kept branch whose ExecPlan says `status`."""
    return SurvivorEvidence(clean=True, commits=commits, execplan=PLAN.format(status=status))


def exhausted_at_implement() -> Run:
    """1.1.1 fails at implement: its build gate's budget ran out on a repeated failure."""
    run = Run(gate_retry_budget={"build": 1})
    run.drive_to("1.1.1", "implement")
    while run.status("1.1.1") == "running":
        run.finish("1.1.1", "gate:build:cannot compile")
    return run


def dispatched_after(run: Run, mark: int) -> list[tuple[str, int]]:
    return [(e.stage, e.attempt) for e in of(ev.StageDispatched, run.events[mark:])]


def test_a_product_failure_with_a_kept_branch_offers_to_continue_it_first() -> None:
    run = exhausted_at_implement()
    t = run.state.task("1.1.1")
    moves = next_moves(run.state, t)
    assert [m.move for m in moves] == ["recover", "rearm", "retry"]
    assert moves[0].says.startswith("continue from the kept work on `roadmap-1-1-1`")
    # The rearm offered carries a concrete override: the exhausted gate's budget, raised.
    assert moves[1].usage == " gateRetryBudget.build=2"
    assert "raised from 1 to 2" in moves[1].says
    assert moves[2].says == "start over from plan on a fresh `roadmap-1-1-1` from `main`"


def test_an_infrastructure_fault_offers_retry_first() -> None:
    run = Run(stage_attempts=1)
    run.finish("1.1.1", "crash")
    t = run.state.task("1.1.1")
    assert t.status == "infra-fault"
    assert [m.move for m in next_moves(run.state, t)] == ["retry", "recover", "complete"]


@pytest.mark.parametrize(
    ("status", "stage"),
    [("IN PROGRESS", "implement"), ("APPROVED", "implement"), ("COMPLETE", "implement")],
    ids=["in-progress", "approved", "complete-but-failed-at-implement"],
)
def test_recover_continues_at_the_stage_the_execplan_names(status: str, stage: str) -> None:
    run = exhausted_at_implement()
    mark = len(run.events)
    events, effects = run.move("recover", "1.1.1", evidence=kept(status))
    [recovered] = of(ev.TaskRecovered, events)
    assert recovered.stage == stage
    assert dispatched_after(run, mark)[0][0] == stage
    assert "plan" not in [s for s, _ in dispatched_after(run, mark)]
    sent = [f for f in effects if isinstance(f, DispatchStage)]
    assert sent and all(d.fresh is None for d in sent)  # kept work is continued, not moved


def test_recover_never_skips_the_stage_that_failed() -> None:
    """A COMPLETE ExecPlan points at review, but the gates failed: they run again."""
    run = Run(route_budget=1)
    run.drive_to("1.1.1", "gates")
    while run.status("1.1.1") == "running":
        at_gates = run.state.task("1.1.1").stage == "gates"
        run.finish_stage("1.1.1", "gate:build:make test exited 2" if at_gates else "pass")
    assert run.state.task("1.1.1").stage == "gates"
    mark = len(run.events)
    run.move("recover", "1.1.1", evidence=kept("COMPLETE"))
    assert dispatched_after(run, mark)[0][0] == "gates"
    assert run.state.task("1.1.1").stage == "gates"


def test_recover_counts_attempts_per_retry_cycle() -> None:
    run = exhausted_at_implement()
    t = run.state.task("1.1.1")
    assert t.cycle_attempt("implement") >= 2
    run.move("recover", "1.1.1", evidence=kept("IN PROGRESS"))
    t = run.state.task("1.1.1")
    assert (t.cycle_attempt("implement"), t.retries) == (1, 1)
    assert t.attempts["implement"] > 1  # the run's numbering goes on: keys stay unique
    v = task_view(run.state, t)
    assert v.head == "running implement (attempt 1, retry 1)"
    assert [(r.stage, r.attempts) for r in v.stages] == [("implement", 1)]


@pytest.mark.parametrize(
    ("evidence", "why"),
    [
        (kept("BLOCKED"), "`Status: BLOCKED`"),
        (SurvivorEvidence(collection_error="gone"), "could not be read"),
        (None, "could not be read"),
        (kept("COMPLETE", commits=0), "no commits"),
    ],
    ids=["blocked", "unreadable", "not-read", "complete-without-commits"],
)
def test_recover_is_refused_when_continue_mode_would_not_resume(
    evidence: SurvivorEvidence | None, why: str
) -> None:
    run = exhausted_at_implement()
    events, effects = run.move("recover", "1.1.1", evidence=evidence)
    [rejected] = of(ev.MoveRejected, events)
    assert why in rejected.why and "`/odw retry 1.1.1` starts over" in rejected.why
    assert effects == [] and run.status("1.1.1") == "failed"


def test_retry_starts_over_from_plan_on_a_fresh_branch_keeping_the_old_work() -> None:
    run = exhausted_at_implement()
    mark = len(run.events)
    _, effects = run.move("retry", "1.1.1")
    assert dispatched_after(run, mark)[0][0] == "plan"
    [d] = [f for f in effects if isinstance(f, DispatchStage)]
    assert d.fresh == "odw-kept/roadmap-1-1-1/retry-1"
    assert run.state.task("1.1.1").fresh is None  # only the first attempt moves the branch
    assert run.state.task("1.1.1").cycle_attempt("plan") == 1


def test_a_bare_rearm_is_refused_and_one_with_an_override_continues_the_kept_work() -> None:
    run = exhausted_at_implement()
    events, _ = run.move("rearm", "1.1.1")
    [rejected] = of(ev.MoveRejected, events)
    assert "rearm needs an override" in rejected.why
    assert run.status("1.1.1") == "failed"
    mark = len(run.events)
    events, _ = run.move(
        "rearm", "1.1.1", overrides={"gateRetryBudget": {"build": 4}}, evidence=kept("APPROVED")
    )
    [rearmed] = of(ev.TaskRearmed, events)
    assert rearmed.stage == "implement"
    assert dispatched_after(run, mark)[0][0] == "implement"
    assert run.state.task("1.1.1").overrides == {"gateRetryBudget": {"build": 4}}
