"""Which waiting units a failure dooms, read from the roadmap model's dependencies.

A requirement waits on what the roadmap says it names: a task and its addenda,
or every task under a step or phase prefix (never the requester itself). A
waiting unit is downstream of a failed one when a requirement of it waits on
any task the failed unit stands for (its id, or the addenda it carries).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

from app.core.roadmap import Roadmap


@dataclass(frozen=True)
class Unit:
    """A schedulable unit as dependencies see it: its id, what it carries, what it needs."""

    id: str
    carries: Collection[str]
    requires: Sequence[str]


def waited_on(roadmap: Roadmap, dep: str, *, requester: str) -> set[str]:
    """The task ids one requirement waits on."""
    if roadmap.get(dep) is not None:
        named = {dep, *(a.id for a in roadmap.addenda(dep))}
    else:
        named = {t.id for t in roadmap.under(dep)}
    named.discard(requester)
    return named


def depends_on(roadmap: Roadmap, unit: Unit, other: Unit) -> bool:
    """Whether `unit` waits (directly) on `other`."""
    carried = {other.id, *other.carries}
    return any(carried & waited_on(roadmap, d, requester=unit.id) for d in unit.requires)


def doomed(roadmap: Roadmap, failed: Sequence[Unit], waiting: Sequence[Unit]) -> Mapping[str, str]:
    """Waiting units downstream (transitively) of a failed one, each with that root."""
    out: dict[str, str] = {}
    queue = [(r, r.id) for r in failed]
    while queue:
        node, root = queue.pop(0)
        for w in waiting:
            if w.id not in out and w.id != node.id and depends_on(roadmap, w, node):
                out[w.id] = root
                queue.append((w, root))
    return out
