"""Selection: which tasks may start now, and what the others are waiting for.

Readiness is derived from the roadmap on the base branch plus two sets the
caller knows: ids taken by live attempts and ids held by surviving branches.
"""

from __future__ import annotations

from app.core.naming import addendum_branch, task_branch
from app.core.roadmap import Roadmap, Task
from app.core.values import Value

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Literal

    CandidateKind = Literal["normal", "addendum"]


class Candidate(Value):
    """A unit of work that may be dispatched now."""

    id: str
    kind: CandidateKind
    branch: str
    subtasks: tuple[str, ...]
    line: int

    def __init__(
        self, id: str, kind: CandidateKind, branch: str, subtasks: tuple[str, ...], line: int
    ) -> None:
        super().__init__(id=id, kind=kind, branch=branch, subtasks=subtasks, line=line)

    def to_json(self) -> dict[str, object]:
        return {
            "id": self.id,
            "kind": self.kind,
            "branch": self.branch,
            "subtasks": list(self.subtasks),
        }


class Blocked(Value):
    """An open task and what it still waits for: this roadmap's ids, other projects' work."""

    id: str
    missing: tuple[str, ...]
    line: int
    external: tuple[str, ...]

    def __init__(
        self, id: str, missing: tuple[str, ...], line: int, external: tuple[str, ...] = ()
    ) -> None:
        super().__init__(id=id, missing=missing, line=line, external=external)

    def to_json(self) -> dict[str, object]:
        return {"id": self.id, "missing": list(self.missing), "external": list(self.external)}


class Frontier(Value):
    """What may start now and what waits, both in document order."""

    ready: tuple[Candidate, ...]
    blocked: tuple[Blocked, ...]

    def __init__(self, ready: tuple[Candidate, ...], blocked: tuple[Blocked, ...]) -> None:
        super().__init__(ready=ready, blocked=blocked)

    def to_json(self) -> dict[str, object]:
        return {
            "ready": [c.to_json() for c in self.ready],
            "blocked": [b.to_json() for b in self.blocked],
        }


def frontier(roadmap: Roadmap, *, taken: Iterable[str] = (), held: Iterable[str] = ()) -> Frontier:
    """The ready frontier in document order; nothing at all from an invalid roadmap."""
    if not roadmap.valid:
        return Frontier(ready=(), blocked=())
    busy = set(taken) | set(held)
    ready: list[Candidate] = []
    blocked: list[Blocked] = []
    missing_local = roadmap.missing_local
    for task in roadmap.tasks:
        if task.is_addendum:
            continue
        if task.done:
            if roadmap.has_addenda(task.id):
                _addendum_pass(roadmap, task, busy, ready, blocked)
            continue
        missing, external = missing_local(task), task.external_unmet
        if missing or external:
            # `of`: a record from its fields at once, thousands of times per read
            blocked.append(
                Blocked.of(
                    {"id": task.id, "missing": tuple(missing), "line": task.line,
                     "external": external}
                )
            )  # fmt: skip
        elif task.id not in busy:
            ready.append(
                Candidate.of(
                    {"id": task.id, "kind": "normal", "branch": task_branch(task.id),
                     "subtasks": (), "line": task.line}
                )
            )  # fmt: skip
    ready.sort(key=lambda c: c.line)
    blocked.sort(key=lambda b: b.line)
    return Frontier(ready=tuple(ready), blocked=tuple(blocked))


def _addendum_pass(
    roadmap: Roadmap,
    parent: Task,
    busy: set[str],
    ready: list[Candidate],
    blocked: list[Blocked],
) -> None:
    """Open addenda of a ticked parent run together on the parent's addendum branch."""
    open_addenda = [a for a in roadmap.addenda(parent.id) if not a.done]
    if not open_addenda:
        return
    runnable: list[Task] = []
    for a in open_addenda:
        missing, external = roadmap.missing_local(a), a.external_unmet
        if missing or external:
            blocked.append(Blocked(a.id, tuple(missing), a.line, external))
        else:
            runnable.append(a)
    if not runnable or parent.id in busy or any(a.id in busy for a in open_addenda):
        return
    ready.append(
        Candidate(
            parent.id,
            "addendum",
            addendum_branch(parent.id),
            tuple(a.id for a in runnable),
            runnable[0].line,
        )
    )
