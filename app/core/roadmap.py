"""The roadmap model: tasks parsed from a GIST-style `docs/roadmap.md`.

Parsing never raises on odd text: what cannot be scheduled safely is reported
as an error or a warning, each naming ids and line numbers. Duplicate ids stop
all scheduling; a cycle among open tasks blocks only the tasks on and behind
it. Dependencies of ticked tasks are never checked. Unknown and external
dependencies are warnings that keep their task blocked (fail closed).
"""

from __future__ import annotations

import re

from app.core.graph import behind, cycle_through, strongly_connected
from app.core.requires import clauses_of
from app.core.roadmap_scan import Draft, headline, joined, scan
from app.core.values import Value

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Literal

    ProblemKind = Literal[
        "duplicate-id", "cycle", "unknown-dependency", "self-reference", "external-dependency"
    ]

_SUCCESS = re.compile(r"^(?:\[[ xX]\][ \t]+)?Success(?:[ \t]+criteria)?:[ \t]*(?P<text>.*)$", re.S)
_SUCCESS_SENTENCE = re.compile(r"\bSuccess criteria:[ \t]*(?P<text>.*?)(?:\.(?=\s|$)|$)", re.S)


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


def _finish(d: Draft, met: frozenset[str]) -> Task:
    title = joined(d.title_parts)
    success: str | None = None
    context: list[str] = []
    requirement_texts = [title] if "Requires" in title else []
    for parts in d.bullets:
        text = joined(parts)
        # Collapsed text: a success bullet has "Success" at 0 or after "[x] ".
        m = _SUCCESS.match(text) if "Success" in text[:11] else None
        if m and success is None:
            success = m.group("text").strip()
            continue
        if text.startswith("Requires"):
            requirement_texts.append(text)
            continue
        context.append(text)
    if success is None and "Success criteria:" in title:
        sm = _SUCCESS_SENTENCE.search(title)
        if sm:
            success = sm.group("text").strip()
    parent = d.parent
    addendum_of = None
    if parent is not None and parent.done and d.id.startswith(parent.id + "."):
        addendum_of = parent.id
    requires: dict[str, str] = {}
    selfs: dict[str, str] = {}
    external: dict[str, str] = {}
    if requirement_texts:
        for clause in clauses_of(requirement_texts):
            for dep in clause.local:
                # A phase or step that contains the task can never be met before it.
                target = selfs if d.id.startswith(dep + ".") else requires
                target.setdefault(dep, clause.text)
            for ref in clause.external:
                external.setdefault(ref, clause.text)
    return Task.of(
        {
            "id": d.id,
            "title": title,
            "done": d.done,
            "requires": tuple(requires),
            "line": d.line,
            "success": success,
            "context": tuple(context),
            "addendum_of": addendum_of,
            "external": tuple(external),
            "external_unmet": tuple(r for r in external if external_key(r) not in met)
            if external
            else (),
            "self_references": tuple(selfs),
            "sources": tuple({**requires, **selfs, **external}.items())
            if selfs or external
            else tuple(requires.items()),
        }
    )


def parse_roadmap(text: str, *, external_met: Iterable[str] = ()) -> Roadmap:
    """Parse roadmap text; never raises, reports problems instead.

    `external_met` lists the other projects' references the repository
    configuration declares met (`externalMet`); any other external reference
    keeps its task blocked.
    """
    met = frozenset(external_key(r) for r in external_met)
    tasks = [_finish(d, met) for d in scan(text)]
    roadmap = Roadmap(tasks=tuple(tasks))
    # Filled in after the checks that need the indexed roadmap, so it is indexed once.
    roadmap.__dict__["errors"] = tuple(duplicates(tasks) + open_cycles(roadmap))
    roadmap.__dict__["warnings"] = tuple(dependency_warnings(roadmap))
    return roadmap


# What is wrong with a parsed roadmap (only open tasks are checked).


def duplicates(tasks: list[Task]) -> list[Problem]:
    lines: dict[str, list[int]] = {}
    for t in tasks:
        lines.setdefault(t.id, []).append(t.line)
    return [
        Problem(
            kind="duplicate-id",
            ids=(tid,),
            lines=tuple(ls),
            message=f"task id {tid} appears {len(ls)} times, on lines "
            + ", ".join(str(n) for n in ls),
        )
        for tid, ls in lines.items()
        if len(ls) > 1
    ]


def dependency_warnings(roadmap: Roadmap) -> list[Problem]:
    """Unknown, self-referencing and external dependencies of open tasks only."""
    out = []
    for t in roadmap.tasks:
        if t.done:
            continue  # dependencies of ticked work do not matter for scheduling
        where = f"task {t.id} (line {t.line})"
        for dep in t.requires:
            if not roadmap.names_something(dep):
                out.append(
                    Problem(
                        kind="unknown-dependency",
                        ids=(t.id, dep),
                        lines=(t.line,),
                        message=f"{where} requires {dep}, which names no task, step or "
                        f"phase in the roadmap; {t.id} stays blocked",
                    )
                )
        for dep in t.self_references:
            out.append(
                Problem(
                    kind="self-reference",
                    ids=(t.id, dep),
                    lines=(t.line,),
                    message=f"{where} requires {dep}, which contains {t.id} itself and so "
                    f"can never be met first; ignored (clause: {t.source_of(dep)!r})",
                )
            )
        for ref in t.external:
            state = (
                f"{t.id} stays blocked until `config.externalMet` in .github/odw.yml lists it"
                if ref in t.external_unmet
                else "declared met by `config.externalMet`"
            )
            out.append(
                Problem(
                    kind="external-dependency",
                    ids=(t.id,),
                    lines=(t.line,),
                    message=f"{where} depends on {ref!r}, another project's work, which "
                    f"this roadmap cannot resolve; {state}",
                )
            )
    return out


def _edges(roadmap: Roadmap) -> dict[str, dict[str, str]]:
    """What each open task waits for among open tasks, and the dependency behind each edge.

    Ticked tasks have no edges: their dependencies no longer matter. An edge to
    a ticked task cannot be on a cycle, so it is left out too. A target is open
    when the first task with its id is (duplicate ids may disagree).
    """
    by_id = roadmap.by_id
    unique = len(by_id) == len(roadmap.tasks)
    graph: dict[str, dict[str, str]] = {}
    for t in roadmap.tasks:
        if t.done:
            continue
        targets = graph.setdefault(t.id, {})
        for dep in t.requires:
            if dep in by_id:
                named = [dep] + [a.id for a in roadmap.addenda(dep) if a.id != t.id]
            elif unique:  # the open members are exactly the open targets
                for m in roadmap.open_under(dep):
                    if m.id != t.id:
                        targets.setdefault(m.id, dep)
                continue
            else:
                named = [m.id for m in roadmap.under(dep) if m.id != t.id]
            for target in named:
                other = by_id.get(target)
                if other is not None and not other.done:
                    targets.setdefault(target, dep)  # an explicit self-dependency is a cycle
    return graph


def _all_point_up(roadmap: Roadmap) -> bool:
    """Whether every edge `_edges` would make points to an earlier task, found without
    making them: a step or phase needs only its last open task looked at, where
    `_edges` makes an edge to each (`Requires phase 3` is one edge per open task)."""
    by_id = roadmap.by_id
    if len(by_id) != len(roadmap.tasks):
        return False  # duplicate ids: `_edges` decides
    order = {t.id: i for i, t in enumerate(roadmap.tasks)}
    addenda, open_under = roadmap._addenda, roadmap._open
    for here, t in enumerate(roadmap.tasks):
        if t.done:
            continue
        for dep in t.requires:
            task = by_id.get(dep)
            if task is not None:
                targets = [task, *(a for a in addenda.get(dep, ()) if a.id != t.id)]
            else:
                members = [m for m in open_under.get(dep, ())[-2:] if m.id != t.id]
                targets = members[-1:]  # the last open one in the document
            if any(not o.done and order[o.id] >= here for o in targets):
                return False
    return True


def open_cycles(roadmap: Roadmap) -> list[Problem]:
    # A cycle needs an edge that does not point up the document; a roadmap whose
    # tasks wait only for earlier ones has none, and nothing to search.
    if _all_point_up(roadmap):
        return []
    edges = _edges(roadmap)
    order = {t.id: i for i, t in reversed(list(enumerate(roadmap.tasks)))}
    if all(order[b] < order[a] for a, targets in edges.items() for b in targets):
        return []
    graph = {k: list(v) for k, v in edges.items()}
    out = []
    for comp in strongly_connected(graph):
        if len(comp) == 1 and comp[0] not in graph[comp[0]]:
            continue
        ids = sorted(comp, key=lambda i: order[i])
        lines = tuple(roadmap.by_id[i].line for i in ids)
        path = cycle_through(graph, ids[0], set(comp))
        hops = []
        for a, b in zip(path, [*path[1:], path[0]], strict=True):
            task, dep = roadmap.by_id[a], edges[a][b]
            via = "" if dep == b else f" (through {dep})"
            hops.append(f"{a} -> {b}{via} from {task.source_of(dep)!r} on line {task.line}")
        waiting = sorted(behind(graph, set(comp)), key=lambda i: order[i])
        out.append(
            Problem(
                kind="cycle",
                ids=tuple(ids),
                lines=lines,
                message="dependency cycle among open tasks: "
                + " -> ".join([*path, path[0]])
                + " (`A -> B`: A waits for B). Edges: "
                + "; ".join(hops)
                + f". Blocked: {', '.join(ids)}"
                + (f" and the tasks waiting for them ({', '.join(waiting)})" if waiting else "")
                + "; the rest of the roadmap is still scheduled",
            )
        )
    out.sort(key=lambda p: p.lines[0])
    return out
