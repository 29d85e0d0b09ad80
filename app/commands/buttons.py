"""Check-run buttons on `ODW · <id>`: which apply to a task's state, and the
command a click stands for.

A click is handled exactly like the matching comment (permission check
included); GitHub's "Re-run" (`check_run.rerequested`) means retry. The moves
offered are the ones the core would accept in that state (`app.core.moves`),
so a button never offers what would be refused. Pure: no I/O.
"""

from __future__ import annotations

import re

from app.commands.grammar import Command, parse_line
from app.core.moves import REARMABLE, RESTARTABLE
from app.github.protocols import CheckAction

_TASK_CHECK = re.compile(r"^ODW · (?P<id>\d+(?:\.\d+)*)$")

# identifier -> (label, description, the command it stands for; {id} is the task)
BUTTONS: dict[str, tuple[str, str, str]] = {
    "retry": ("Retry", "Run the stopped stage again", "/odw retry {id}"),
    "assess": ("Assess", "Assess the branch; changes nothing", "/odw assess {id}"),
    "complete": (
        "Mark complete",
        "Mark the stopped stage complete",
        '/odw complete {id} --reason "marked complete from the check run by @{by}"',
    ),
    "force-start": ("Force start", "Start before its dependencies", "/odw force-start {id}"),
    "rearm": ("Re-arm", "Reset the task's budgets", "/odw rearm {id}"),
}


def actions_for(status: str) -> list[CheckAction]:
    """The buttons that apply to a task in `status` (at most three)."""
    if status in RESTARTABLE:
        names = ["retry", "assess", "complete"]
    elif status in REARMABLE:
        names = ["force-start", "rearm"]
    else:
        names = []
    return [CheckAction(BUTTONS[n][0], BUTTONS[n][1], n) for n in names][:3]


def task_of_check(name: str) -> str | None:
    """`ODW · 1.2.3` -> `1.2.3`; None for other check runs (the run check included)."""
    m = _TASK_CHECK.match(name)
    return m.group("id") if m else None


def command_for_click(identifier: str, task: str, by: str) -> Command | None:
    """The command a button (or Re-run, identifier `rerequested`) stands for."""
    if identifier == "rerequested":
        identifier = "retry"
    button = BUTTONS.get(identifier)
    if button is None:
        return None
    return parse_line(button[2].format(id=task, by=by))
