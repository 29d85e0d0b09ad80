"""What each verb does through the `CommandHost`: the `do` of its row in `grammar.VERBS`.

The moves are the core's `MoveName`s, each sent to the open run as an
`OperatorMove`; the launches start a fresh run. `tests/commands/test_verbs.py`
checks that the verbs doing `move` are exactly the core's moves.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, get_args

from app.commands.host import Answer, CommandHost, Launch, NoOpenRun, Where
from app.core.inputs import MoveName, OperatorMove
from app.core.repo_config import RepoConfig

if TYPE_CHECKING:  # the table in grammar.py names these functions
    from app.commands.grammar import Command

MOVES: dict[str, MoveName] = {name: name for name in get_args(MoveName)}


@dataclass(frozen=True)
class Asked:
    """Who asked for a command, where, and under which settings."""

    host: CommandHost
    where: Where
    by: str
    config: RepoConfig
    at: datetime


Do = Callable[[Asked, "Command"], Answer]


def status(a: Asked, c: Command) -> Answer:
    return a.host.status(a.where, c.task)


def move(a: Asked, c: Command) -> Answer:
    """An operator move into the open run; a retry after the run ended continues
    the task from its surviving branch in a new run."""
    op = OperatorMove(
        at=a.at,
        move=MOVES[c.verb],
        task=c.task,
        by=a.by,
        reason=c.reason or f"/odw {c.verb} by @{a.by}",
        overrides=dict(c.overrides),
    )
    try:
        return a.host.move(a.where, op)
    except NoOpenRun:
        if c.verb in ("retry", "recover") and c.task is not None:
            return _relaunch(a, c.task)
        return Answer(False, "no ODW run is open on this repository; `/odw run` starts one")


def _relaunch(a: Asked, task: str) -> Answer:
    """After the run ended: a new run continuing the task's surviving branch."""
    answer = a.host.launch(a.where, Launch(a.by, resume_mode="continue", resume_task=task))
    return Answer(
        answer.ok,
        f"the run had ended, so {answer.text}" if answer.ok else answer.text,
        answer.dispatched,
        answer.run_check_url,
        answer.task_pull_url,
    )


def run(a: Asked, c: Command) -> Answer:
    launch = Launch(a.by, dry_run=c.dry_run, task=c.task, max_parallel=c.max_parallel)
    return a.host.launch(a.where, launch)


def recover(a: Asked, c: Command) -> Answer:
    """`recover ID` (continue mode) takes the continue route for that task in the
    open run, or in a new run when none is open; `assess` and the other modes are
    a fresh launch over surviving branches."""
    if c.verb == "recover" and c.mode == "continue" and c.task is not None:
        return move(a, c)
    return a.host.launch(a.where, Launch(a.by, resume_mode=c.mode, resume_task=c.task))
