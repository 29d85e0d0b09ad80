"""Check-run buttons on `ODW · <id>`: which apply to a task, and the command a
click stands for.

A click is handled exactly like the matching comment (permission check
included); GitHub's "Re-run" (`check_run.rerequested`) means retry. A stopped
task's buttons are the moves the core offers it (`app.core.offers`), in that
order, so the first button is the move that fits the failure and its label
says what it runs: "Continue" for kept work, "Start over" for a fresh start.
Pure: no I/O.
"""

from __future__ import annotations

import re

from app.commands.grammar import Command, parse_line
from app.core.moves import REARMABLE, RESTARTABLE
from app.core.offers import NextMove
from app.github.protocols import CheckAction

_TASK_CHECK = re.compile(r"^ODW · (?P<id>\d+(?:\.\d+)*)$")

# identifier -> (label, description, the command it stands for; {id} is the task)
# (GitHub: label and identifier at most 20 characters, description at most 40.)
BUTTONS: dict[str, tuple[str, str, str]] = {
    "recover": ("Continue", "Continue from the kept work", "/odw recover {id}"),
    "retry": ("Start over", "Start over from plan on a fresh branch", "/odw retry {id}"),
    "assess": ("Assess", "Assess the branch; changes nothing", "/odw assess {id}"),
    "complete": (
        "Mark complete",
        "Accept the stopped stage and go on",
        '/odw complete {id} --reason "marked complete from the check run by @{by}"',
    ),
    "force-start": ("Force start", "Start before its dependencies", "/odw force-start {id}"),
}


def actions_for(status: str, moves: tuple[NextMove, ...] = ()) -> list[CheckAction]:
    """The buttons for a task in `status` whose offered moves are `moves` (at most three)."""
    names: list[str]
    if moves:
        names = [m.move for m in moves if m.move in BUTTONS]
        if "assess" not in names:
            names.append("assess")
    elif status in RESTARTABLE:
        names = ["retry", "assess", "complete"]
    elif status in REARMABLE:
        names = ["force-start"]
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
