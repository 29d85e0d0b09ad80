"""The moves offered for a stopped task: the one that fits the failure, in words
that say what it does.

An infrastructure fault or a provider outage had nothing to do with the task's
content: `retry` starts over from the base. A product failure with a kept
branch continues from that work (`recover`: the stage its ExecPlan's `Status`
names); when a gate's budget ran out on a repeated failure, `rearm` with that
budget raised is offered too, never a bare rearm. At most three, the fitting
one first; the App's "Next moves", its buttons and local mode read the same
list. Pure.
"""

from __future__ import annotations

from dataclasses import dataclass

from app.core.inputs import MoveName
from app.core.pipeline import FORWARD
from app.core.state import RunState, TaskState

STOPPED = frozenset({"failed", "infra-fault", "deferred"})


@dataclass(frozen=True)
class NextMove:
    """A move an operator can make on a stopped task, and what it does."""

    move: MoveName
    usage: str  # what follows the task id
    says: str


def next_moves(s: RunState, t: TaskState) -> tuple[NextMove, ...]:
    """The operator's next moves for a task that stopped, the fitting one first."""
    if t.status not in STOPPED:
        return ()
    retry = NextMove("retry", "", f"start over from plan on a fresh `{t.branch}` from `{s.base}`")
    moves: list[NextMove] = []
    if t.status == "failed" and t.branch_started:
        moves.append(recover_move(t))
        if t.exhausted is not None:
            moves.append(rearm_move(t))
        moves.append(retry)
    elif t.status == "failed":
        moves.append(retry)
    else:  # an infrastructure fault or a provider outage: a flake, not the task's content
        moves.append(retry)
        if t.branch_started:
            moves.append(recover_move(t))
    if len(moves) < 3 and t.stage is not None:
        after = FORWARD.get(t.stage, "landing")
        moves.append(
            NextMove(
                "complete",
                ' --reason "..."',
                f"accept {t.stage} as passed and go on to {after}",
            )
        )
    return tuple(moves[:3])


def recover_move(t: TaskState) -> NextMove:
    return NextMove(
        "recover",
        "",
        f"continue from the kept work on `{t.branch}` at the stage its ExecPlan's Status names",
    )


def rearm_move(t: TaskState) -> NextMove:
    assert t.exhausted is not None
    gate, budget = t.exhausted
    raised = budget * 2 if budget > 0 else 2
    return NextMove(
        "rearm",
        f" gateRetryBudget.{gate}={raised}",
        f"continue from the kept work with the {gate} gate's budget raised from {budget} "
        f"to {raised}",
    )
