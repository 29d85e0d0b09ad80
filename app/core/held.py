"""Which open units a run must not select, and why: a surviving branch on the
remote (its work waits for recovery), or not the one task asked for.

Both hosts ask this before a run starts (`odw run --local --task`, `/odw run
--task`), so one rule decides it.
"""

from __future__ import annotations

from app.core.naming import ROADMAP_PATH, addendum_branch, task_branch
from app.core.roadmap import Roadmap
from app.core.selection import frontier


class NotAnOpenTask(ValueError):
    """`--task` names a task the run cannot select (done, or not in the roadmap)."""


def open_units(roadmap: Roadmap) -> list[tuple[str, str]]:
    """(unit id, branch) for every unit a run could select, in document order."""
    f = frontier(roadmap)
    units = {c.id: c.branch for c in f.ready}
    for b in f.blocked:
        task = roadmap.get(b.id)
        addendum = task is not None and task.done
        units.setdefault(b.id, addendum_branch(b.id) if addendum else task_branch(b.id))
    return sorted(units.items(), key=lambda kv: _line(roadmap, kv[0]))


def held_ids(
    roadmap: Roadmap, heads: dict[str, str], only: str | None, *, remote: str = "origin"
) -> dict[str, str]:
    """Ids kept out of selection: a surviving branch in `heads`, or not `only`."""
    units = open_units(roadmap)
    if only is not None and only not in {u for u, _ in units}:
        task = roadmap.get(only)
        why = "is already done" if task is not None and task.done else "is not an open task"
        raise NotAnOpenTask(f"--task {only} {why} in {ROADMAP_PATH}")
    held: dict[str, str] = {}
    for unit, branch in units:
        if branch in heads:
            held[unit] = f"surviving branch {branch} on {remote}"
        elif only is not None and unit != only:
            held[unit] = f"not selected (--task {only})"
    return held


def _line(roadmap: Roadmap, task_id: str) -> int:
    t = roadmap.get(task_id)
    return t.line if t is not None else 0
