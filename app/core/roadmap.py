"""The roadmap model: tasks parsed from a GIST-style `docs/roadmap.md`.

Parsing never raises on odd text: what cannot be scheduled safely is reported
as an error (duplicate ids, cycles) or a warning (unknown dependency), each
naming ids and line numbers, and a roadmap with errors schedules nothing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

from app.core.requires import requires_of

TASK_LINE = re.compile(
    r"^(?P<indent>[ \t]*)[-*+][ \t]+\[(?P<mark>[ xX])\][ \t]+"
    r"(?P<id>\d+(?:\.\d+)+)\.?(?=[ \t]|$)[ \t]*(?P<title>.*)$"
)
_HEADING = re.compile(r"^[ \t]{0,3}#{1,6}(?:[ \t]|$)")
_BULLET = re.compile(r"^(?P<indent>[ \t]*)[-*+][ \t]+(?P<text>.*)$")
_SUCCESS = re.compile(r"^(?:\[[ xX]\][ \t]+)?Success(?:[ \t]+criteria)?:[ \t]*(?P<text>.*)$", re.S)
_SUCCESS_SENTENCE = re.compile(r"\bSuccess criteria:[ \t]*(?P<text>.*?)(?:\.(?=\s|$)|$)", re.S)
_LINE_BREAK = re.compile(r"\r\n|\r|\n")
_SENTENCE_END = re.compile(r"(?<=\.)\s+")

ProblemKind = Literal["duplicate-id", "cycle", "unknown-dependency"]


def split_lines(text: str) -> list[tuple[str, str]]:
    """Lines with their own terminators; only CR, LF and CRLF break lines."""
    out: list[tuple[str, str]] = []
    pos = 0
    for m in _LINE_BREAK.finditer(text):
        out.append((text[pos : m.start()], m.group()))
        pos = m.end()
    if pos < len(text) or not out:
        out.append((text[pos:], ""))
    return out


def _indent_width(prefix: str) -> int:
    return len(prefix.expandtabs(4))


def _collapse(text: str) -> str:
    return " ".join(text.split())


@dataclass(frozen=True)
class Task:
    """One roadmap checkbox with a dotted id."""

    id: str
    title: str
    done: bool
    requires: tuple[str, ...]
    line: int
    success: str | None = None
    context: tuple[str, ...] = ()
    addendum_of: str | None = None

    @property
    def is_addendum(self) -> bool:
        return self.addendum_of is not None

    @property
    def headline(self) -> str:
        """The title without its `Requires ...` and `See ...` sentences (commit subjects)."""
        kept = [
            part
            for part in _SENTENCE_END.split(self.title)
            if part and not part.startswith(("Requires ", "See "))
        ]
        return " ".join(kept) or self.title


@dataclass(frozen=True)
class Problem:
    """An error or warning about the roadmap, always with ids and lines."""

    kind: ProblemKind
    ids: tuple[str, ...]
    lines: tuple[int, ...]
    message: str

    def to_json(self) -> dict[str, object]:
        return {
            "kind": self.kind,
            "ids": list(self.ids),
            "lines": list(self.lines),
            "message": self.message,
        }


@dataclass(frozen=True)
class Roadmap:
    """Parsed tasks in document order plus everything wrong with them."""

    tasks: tuple[Task, ...]
    errors: tuple[Problem, ...] = ()
    warnings: tuple[Problem, ...] = ()
    _by_id: dict[str, Task] = field(default_factory=dict, compare=False, repr=False)
    _addenda: dict[str, list[Task]] = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self) -> None:
        for t in self.tasks:
            self._by_id.setdefault(t.id, t)
            if t.addendum_of is not None:
                self._addenda.setdefault(t.addendum_of, []).append(t)

    @property
    def valid(self) -> bool:
        return not self.errors

    def get(self, task_id: str) -> Task | None:
        return self._by_id.get(task_id)

    def addenda(self, task_id: str) -> list[Task]:
        return list(self._addenda.get(task_id, ()))

    def under(self, prefix: str) -> list[Task]:
        """Tasks whose id extends `prefix` (a step or phase id)."""
        head = prefix + "."
        return [t for t in self.tasks if t.id.startswith(head)]

    def names_something(self, dotted: str) -> bool:
        return self.get(dotted) is not None or bool(self.under(dotted))

    def fully_complete(self, task_id: str, *, ignoring: str | None = None) -> bool:
        """A task counts as complete only with all its addenda ticked too."""
        task = self.get(task_id)
        if task is None:
            return False
        return task.done and all(a.done for a in self.addenda(task_id) if a.id != ignoring)

    def dependency_met(self, dep: str, *, requester: str) -> bool:
        """Met when the task (or every task under the prefix) is fully complete.

        The requesting task itself never counts against a prefix it lives in:
        `Requires steps 13.1-13.3` written on 13.3.4 means the rest of step 13.3.
        """
        if self.get(dep) is not None:
            return self.fully_complete(dep, ignoring=requester)
        members = [t for t in self.under(dep) if t.id != requester]
        if not members and not self.under(dep):
            return False
        return all(t.done for t in members)

    def missing(self, task: Task) -> list[str]:
        """Dependencies of `task` that are not met yet, unknown ones included."""
        return [d for d in task.requires if not self.dependency_met(d, requester=task.id)]

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
    }


@dataclass
class _Draft:
    indent: int
    id: str
    done: bool
    line: int
    title_parts: list[str]
    bullets: list[list[str]] = field(default_factory=list)
    bullet_indents: list[int] = field(default_factory=list)
    title_open: bool = True
    parent: _Draft | None = None


def _finish(d: _Draft) -> Task:
    title = _collapse(" ".join(d.title_parts))
    bullets = [_collapse(" ".join(b)) for b in d.bullets]
    success: str | None = None
    context: list[str] = []
    requirement_texts = [title]
    for text in bullets:
        m = _SUCCESS.match(text)
        if m and success is None:
            success = m.group("text").strip()
            continue
        if text.startswith("Requires"):
            requirement_texts.append(text)
            continue
        context.append(text)
    if success is None:
        sm = _SUCCESS_SENTENCE.search(title)
        if sm:
            success = sm.group("text").strip()
    addendum_of = None
    if d.parent is not None and d.parent.done and d.id.startswith(d.parent.id + "."):
        addendum_of = d.parent.id
    return Task(
        id=d.id,
        title=title,
        done=d.done,
        requires=tuple(requires_of(requirement_texts)),
        line=d.line,
        success=success,
        context=tuple(context),
        addendum_of=addendum_of,
    )


def _scan(text: str) -> list[Task]:
    drafts: list[_Draft] = []
    stack: list[_Draft] = []
    for number, (line, _end) in enumerate(split_lines(text), start=1):
        if not line.strip():
            for d in stack:
                d.title_open = False
            continue
        if _HEADING.match(line):
            stack.clear()
            continue
        indent = _indent_width(line[: len(line) - len(line.lstrip(" \t"))])
        m = TASK_LINE.match(line)
        while stack and stack[-1].indent >= indent:
            stack.pop()
        if m:
            parent = stack[-1] if stack else None
            d = _Draft(
                indent=indent,
                id=m.group("id"),
                done=m.group("mark") in "xX",
                line=number,
                title_parts=[m.group("title")],
                parent=parent,
            )
            if parent is not None:
                parent.title_open = False
            drafts.append(d)
            stack.append(d)
            continue
        if not stack:
            continue
        owner = stack[-1]
        bullet = _BULLET.match(line)
        if bullet:
            owner.title_open = False
            owner.bullets.append([bullet.group("text")])
            owner.bullet_indents.append(indent)
        elif owner.title_open:
            owner.title_parts.append(line.strip())
        elif owner.bullets:
            owner.bullets[-1].append(line.strip())
        else:
            owner.bullets.append([line.strip()])
            owner.bullet_indents.append(indent)
    return [_finish(d) for d in drafts]


def _duplicates(tasks: list[Task]) -> list[Problem]:
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


def _unknown(roadmap: Roadmap) -> list[Problem]:
    out = []
    for t in roadmap.tasks:
        for dep in t.requires:
            if not roadmap.names_something(dep):
                out.append(
                    Problem(
                        kind="unknown-dependency",
                        ids=(t.id, dep),
                        lines=(t.line,),
                        message=f"task {t.id} (line {t.line}) requires {dep}, which names "
                        f"no task, step or phase in the roadmap; {t.id} stays blocked",
                    )
                )
    return out


def _edges(roadmap: Roadmap) -> dict[str, list[str]]:
    """What each task waits for, with prefixes and addenda made explicit."""
    graph: dict[str, list[str]] = {}
    for t in roadmap.tasks:
        targets = graph.setdefault(t.id, [])
        for dep in t.requires:
            if roadmap.get(dep) is not None:
                targets.append(dep)  # an explicit self-dependency is a cycle
                targets.extend(a.id for a in roadmap.addenda(dep) if a.id != t.id)
            else:
                targets.extend(m.id for m in roadmap.under(dep) if m.id != t.id)
    return {k: list(dict.fromkeys(v)) for k, v in graph.items()}


def _cycles(roadmap: Roadmap) -> list[Problem]:
    graph = _edges(roadmap)
    order = {t.id: i for i, t in reversed(list(enumerate(roadmap.tasks)))}
    components = _strongly_connected(graph)
    out = []
    for comp in components:
        if len(comp) == 1 and comp[0] not in graph[comp[0]]:
            continue
        ids = sorted(comp, key=lambda i: order[i])
        lines = tuple(roadmap.get(i).line for i in ids)  # type: ignore[union-attr]
        out.append(
            Problem(
                kind="cycle",
                ids=tuple(ids),
                lines=lines,
                message="dependency cycle: "
                + " -> ".join(f"{i} (line {n})" for i, n in zip(ids, lines, strict=True))
                + f" -> {ids[0]}",
            )
        )
    out.sort(key=lambda p: p.lines[0])
    return out


def _strongly_connected(graph: dict[str, list[str]]) -> list[list[str]]:
    """Tarjan's algorithm, iterative so deep chains cannot overflow the stack."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    result: list[list[str]] = []
    counter = 0
    for root in graph:
        if root in index:
            continue
        work: list[tuple[str, int]] = [(root, 0)]
        while work:
            node, i = work.pop()
            if i == 0:
                index[node] = low[node] = counter
                counter += 1
                stack.append(node)
                on_stack.add(node)
            succs = graph.get(node, [])
            if i < len(succs):
                work.append((node, i + 1))
                nxt = succs[i]
                if nxt not in index:
                    work.append((nxt, 0))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            if low[node] == index[node]:
                comp = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp.append(w)
                    if w == node:
                        break
                result.append(comp)
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
    return result


def parse_roadmap(text: str) -> Roadmap:
    """Parse roadmap text; never raises, reports problems instead."""
    tasks = _scan(text)
    draft = Roadmap(tasks=tuple(tasks))
    errors = _duplicates(tasks) + _cycles(draft)
    return Roadmap(tasks=tuple(tasks), errors=tuple(errors), warnings=tuple(_unknown(draft)))
