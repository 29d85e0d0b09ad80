"""Ticking a task: the one edit ODW makes to a roadmap, byte-exact."""

from __future__ import annotations

from app.core.roadmap_scan import TASK_LINE, split_lines


class TickError(ValueError):
    """The task cannot be ticked: unknown, already done, or ambiguous."""


def tick(text: str, task_id: str) -> str:
    """Flip exactly the `[ ]` of `task_id` to `[x]`; every other byte stays."""
    hits: list[tuple[int, bool]] = []
    offset = 0
    for line, end in split_lines(text):
        m = TASK_LINE.match(line)
        if m and m.group("id") == task_id:
            hits.append((offset + m.start("mark"), m.group("mark") != " "))
        offset += len(line) + len(end)
    if not hits:
        raise TickError(f"task {task_id} is not in the roadmap")
    if len(hits) > 1:
        raise TickError(f"task {task_id} appears {len(hits)} times; refusing to guess")
    position, done = hits[0]
    if done:
        raise TickError(f"task {task_id} is already ticked")
    return text[:position] + "x" + text[position + 1 :]


def is_ticked(text: str, task_id: str) -> bool:
    for line, _ in split_lines(text):
        m = TASK_LINE.match(line)
        if m and m.group("id") == task_id:
            return m.group("mark") != " "
    return False
