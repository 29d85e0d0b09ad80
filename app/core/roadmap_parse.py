"""Parsing a roadmap: the scanner's drafts finished into tasks, then checked.

Parsing never raises on odd text: what cannot be scheduled safely is reported
as an error or a warning, each naming ids and line numbers. Duplicate ids stop
all scheduling; a cycle among open tasks blocks only the tasks on and behind
it. Dependencies of ticked tasks are never checked. Unknown and external
dependencies are warnings that keep their task blocked (fail closed).
"""

from __future__ import annotations

import re

from app.core.dependency_read import Context, read_open_task
from app.core.graph import behind, cycle_through, strongly_connected
from app.core.requires import clauses_of
from app.core.roadmap import Problem, Roadmap, Task, external_key
from app.core.roadmap_scan import Draft, joined, scan

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable

_SUCCESS = re.compile(r"^(?:\[[ xX]\][ \t]+)?Success(?:[ \t]+criteria)?:[ \t]*(?P<text>.*)$", re.S)
_SUCCESS_SENTENCE = re.compile(r"\bSuccess criteria:[ \t]*(?P<text>.*?)(?:\.(?=\s|$)|$)", re.S)


def _finish(
    d: Draft, met: frozenset[str], position: int, rm: Context
) -> tuple[Task, list[Problem]]:
    """The task of draft `d` (the `position`th), and the notes its dependencies left."""
    title = joined(d.title_parts)
    success: str | None = None
    success_bullet = -1
    context: list[str] = []
    requirement_texts = [title] if "Requires" in title else []
    for k, parts in enumerate(d.bullets):
        text = joined(parts)
        # Collapsed text: a success bullet has "Success" at 0 or after "[x] ".
        m = _SUCCESS.match(text) if "Success" in text[:11] else None
        if m and success is None:
            success = m.group("text").strip()
            success_bullet = k
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
    notes: list[Problem] = []
    if not d.done:  # every form its author wrote (`dependency_read`)
        texts = ["\n".join(d.title_parts)]
        texts.extend(b for k, b in enumerate(d.bullets) if k != success_bullet)
        reading = read_open_task(d, position, texts, rm)
        requires, selfs, external, notes = (
            reading.requires,
            reading.selfs,
            reading.external,
            reading.notes,
        )
    elif requirement_texts:  # ticked: read as written before, never checked
        for clause in clauses_of(requirement_texts):
            for dep in clause.local:
                # A phase or step that contains the task can never be met before it.
                target = selfs if d.id.startswith(dep + ".") else requires
                target.setdefault(dep, clause.text)
            for ref in clause.external:
                external.setdefault(ref, clause.text)
    task = Task.of(
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
    return task, notes


def parse_roadmap(text: str, *, external_met: Iterable[str] = ()) -> Roadmap:
    """Parse roadmap text; never raises, reports problems instead.

    `external_met` lists the other projects' references the repository
    configuration declares met (`externalMet`); any other external reference
    keeps its task blocked.
    """
    met = frozenset(external_key(r) for r in external_met)
    drafts = scan(text)
    rm = Context(drafts, text)
    tasks, notes = [], []
    for position, d in enumerate(drafts):
        task, task_notes = _finish(d, met, position, rm)
        tasks.append(task)
        notes.append(task_notes)
    roadmap = Roadmap(tasks=tuple(tasks))
    # Filled in after the checks that need the indexed roadmap, so it is indexed once.
    errors = duplicates(tasks) + open_cycles(roadmap) + no_readable_task(rm.text, tasks)
    roadmap.__dict__["errors"] = tuple(errors)
    roadmap.__dict__["warnings"] = tuple(dependency_warnings(roadmap, notes))
    return roadmap


_CHECKLIST = re.compile(r"^[ \t]*[-*+][ \t]+\[[ xX]\][ \t].*$", re.MULTILINE)


def no_readable_task(text: str, tasks: list[Task]) -> list[Problem]:
    """A file with checklist items and no task ODW can read is refused, never read as empty."""
    if tasks:
        return []
    first = _CHECKLIST.search(text)
    if first is None:
        return []
    line = text.count("\n", 0, first.start()) + 1
    return [
        Problem(
            kind="no-readable-task",
            ids=(first.group().strip(),),
            lines=(line,),
            message=f"line {line} is a checklist item, {first.group().strip()!r}, but no line "
            "of the file is a task ODW can read, so nothing is scheduled; write tasks as "
            "`- [ ] 1.2.3. Title` (or `- [ ] Task 1.2.3: Title`)",
        )
    ]


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


def dependency_warnings(
    roadmap: Roadmap, notes: list[list[Problem]] | None = None
) -> list[Problem]:
    """Unknown, self-referencing and external dependencies of open tasks only, then each
    task's notes (`notes[k]` for task k; a section's note is said once)."""
    out = []
    said: set[str] = set()
    for k, t in enumerate(roadmap.tasks):
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
            earlier = [u.id for u in roadmap.under(dep) if u.line < t.line]
            out.append(
                Problem(
                    kind="self-reference",
                    ids=(t.id, dep),
                    lines=(t.line,),
                    message=f"{where} requires {dep}, which contains {t.id} itself and so "
                    f"cannot be met first; read as the tasks of {dep} before it: "
                    f"{', '.join(earlier) or 'none'} (clause: {t.source_of(dep)!r})",
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
        for note in notes[k] if notes else ():
            if note.message not in said:
                said.add(note.message)
                out.append(note)
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
