"""The roadmap model: the tasks of a GIST-style `docs/roadmap.md` and what is wrong with it.

`roadmap_parse.parse_roadmap` makes one from text. The model alone is what a
cached read (`odw next` on a roadmap read before) needs, so it imports neither
the scanner nor the clause grammar nor the graph code.
"""

from __future__ import annotations

from app.core.headline import headline
from app.core.values import Value

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Literal

    ProblemKind = Literal[
        "duplicate-id",
        "cycle",
        "no-readable-task",
        "unknown-dependency",
        "self-reference",
        "external-dependency",
        "alternative-dependency",
        "prose-dependency",
        "unread-dependency",
    ]


class Task(Value):
    """One roadmap checkbox with a dotted id."""

    id: str
    title: str
    done: bool
    requires: tuple[str, ...]
    line: int
    success: str | None
    context: tuple[str, ...]
    addendum_of: str | None
    external: tuple[str, ...]  # other projects' steps, as written
    external_unmet: tuple[str, ...]  # those the configuration has not declared met
    self_references: tuple[str, ...]  # phases or steps containing the task itself
    sources: tuple[tuple[str, str], ...]  # (dependency, the clause that named it)

    def __init__(
        self,
        id: str,
        title: str,
        done: bool,
        requires: tuple[str, ...],
        line: int,
        success: str | None = None,
        context: tuple[str, ...] = (),
        addendum_of: str | None = None,
        external: tuple[str, ...] = (),
        external_unmet: tuple[str, ...] = (),
        self_references: tuple[str, ...] = (),
        sources: tuple[tuple[str, str], ...] = (),
    ) -> None:
        super().__init__(
            id=id, title=title, done=done, requires=requires, line=line, success=success,
            context=context, addendum_of=addendum_of, external=external,
            external_unmet=external_unmet, self_references=self_references, sources=sources,
        )  # fmt: skip

    def source_of(self, dep: str) -> str:
        return next((text for d, text in self.sources if d == dep), "")

    @property
    def is_addendum(self) -> bool:
        return self.addendum_of is not None

    @property
    def headline(self) -> str:
        """The title without its `Requires ...` and `See ...` sentences (commit subjects)."""
        return headline(self.title)


class Problem(Value):
    """An error or warning about the roadmap, always with ids and lines."""

    kind: ProblemKind
    ids: tuple[str, ...]
    lines: tuple[int, ...]
    message: str

    def __init__(
        self, kind: ProblemKind, ids: tuple[str, ...], lines: tuple[int, ...], message: str
    ) -> None:
        super().__init__(kind=kind, ids=ids, lines=lines, message=message)

    def to_json(self) -> dict[str, object]:
        return {
            "kind": self.kind,
            "ids": list(self.ids),
            "lines": list(self.lines),
            "message": self.message,
        }


def _prefixes(task_id: str) -> list[str]:
    """`1.2.3` -> [`1`, `1.2`]: the phase and step ids a task id extends."""
    parts = task_id.split(".")
    return [".".join(parts[:k]) for k in range(1, len(parts))]


class Roadmap(Value):
    """Parsed tasks in document order plus everything wrong with them."""

    tasks: tuple[Task, ...]
    errors: tuple[Problem, ...]
    warnings: tuple[Problem, ...]
    _by_id: dict[str, Task]
    _addenda: dict[str, list[Task]]
    _under: dict[str, list[Task]]
    _open: dict[str, list[Task]]

    def __init__(
        self,
        tasks: tuple[Task, ...],
        errors: tuple[Problem, ...] = (),
        warnings: tuple[Problem, ...] = (),
    ) -> None:
        # Indexed once: `under` and `dependency_met` run for every task on every
        # selection, so a scan per prefix would make a large roadmap quadratic.
        by_id: dict[str, Task] = {}
        addenda: dict[str, list[Task]] = {}
        under: dict[str, list[Task]] = {}
        open_under: dict[str, list[Task]] = {}
        super().__init__(
            tasks=tasks, errors=errors, warnings=warnings,
            _by_id=by_id, _addenda=addenda, _under=under, _open=open_under,
        )  # fmt: skip
        chains: dict[str, list[str]] = {}  # parent id -> the prefixes of its children
        for t in tasks:
            tid = t.id
            if tid not in by_id:
                by_id[tid] = t
            if t.addendum_of is not None:
                addenda.setdefault(t.addendum_of, []).append(t)
            parent = tid.rpartition(".")[0]
            prefixes = chains.get(parent) if parent else None
            if prefixes is None:
                prefixes = chains[parent] = _prefixes(tid)
            for prefix in prefixes:
                members = under.get(prefix)
                if members is None:
                    under[prefix] = [t]
                else:
                    members.append(t)
                if not t.done:
                    opened = open_under.get(prefix)
                    if opened is None:
                        open_under[prefix] = [t]
                    else:
                        opened.append(t)

    def replace(self, **changes: Any) -> Roadmap:
        """A copy with some fields changed, indexed afresh (the indexes follow the tasks)."""
        fields = {"tasks": self.tasks, "errors": self.errors, "warnings": self.warnings}
        return Roadmap(**{**fields, **changes})

    @property
    def valid(self) -> bool:
        """Schedulable at all: duplicate ids stop everything.

        A cycle is an error too, but it blocks only the tasks on and behind it
        (they wait for each other), so the rest of the roadmap is still scheduled.
        """
        return not any(p.kind == "duplicate-id" for p in self.errors)

    @property
    def by_id(self) -> dict[str, Task]:
        return self._by_id

    def get(self, task_id: str) -> Task | None:
        return self._by_id.get(task_id)

    def addenda(self, task_id: str) -> list[Task]:
        return list(self._addenda.get(task_id, ()))

    def has_addenda(self, task_id: str) -> bool:
        return task_id in self._addenda

    def under(self, prefix: str) -> list[Task]:
        """Tasks whose id extends `prefix` (a step or phase id)."""
        return list(self._under.get(prefix, ()))

    def open_under(self, prefix: str) -> list[Task]:
        """The open tasks among `under(prefix)`."""
        return list(self._open.get(prefix, ()))

    def names_something(self, dotted: str) -> bool:
        return dotted in self._by_id or dotted in self._under

    def fully_complete(self, task_id: str, *, ignoring: str | None = None) -> bool:
        """A task counts as complete only with all its addenda ticked too."""
        task = self._by_id.get(task_id)
        if task is None:
            return False
        return task.done and all(a.done for a in self._addenda.get(task_id, ()) if a.id != ignoring)

    def dependency_met(self, dep: str, *, requester: str) -> bool:
        """Met when the task (or every task under the prefix) is fully complete.

        A prefix that contains the requester is never one of its dependencies
        (parsing reports it as a `self-reference`); the guard here keeps a
        hand-built task from waiting for itself.
        """
        if dep in self._by_id:
            return self.fully_complete(dep, ignoring=requester)
        if dep not in self._under:
            return False
        return all(t.id == requester for t in self._open.get(dep, ()))

    def missing_local(self, task: Task) -> list[str]:
        """This roadmap's ids `task` still waits for, unknown ones included."""
        if not task.requires:
            return []
        by_id, addenda, missing = self._by_id, self._addenda, []
        for dep in task.requires:
            found = by_id.get(dep)
            if found is not None and dep not in addenda:  # a task with no addenda:
                if not found.done:  # met once ticked (the common case, asked first)
                    missing.append(dep)
            elif not self.dependency_met(dep, requester=task.id):
                missing.append(dep)
        return missing

    def missing(self, task: Task) -> list[str]:
        """Everything `task` still waits for: local ids, then external references."""
        return self.missing_local(task) + list(task.external_unmet)

    def to_json(self) -> dict[str, object]:
        return {
            "tasks": [task_json(t) for t in self.tasks],
            "errors": [p.to_json() for p in self.errors],
            "warnings": [p.to_json() for p in self.warnings],
        }


def task_json(task: Task) -> dict[str, object]:
    return {
        "id": task.id,
        "title": task.title,
        "done": task.done,
        "requires": list(task.requires),
        "line": task.line,
        "addendumOf": task.addendum_of,
        "success": task.success,
        "context": list(task.context),
        "external": list(task.external),
    }


def external_key(reference: str) -> str:
    """How `externalMet` entries match references: case and spacing do not matter."""
    return " ".join(reference.split()).casefold()
