"""What is wrong with a parsed roadmap: duplicate ids, cycles among open tasks, and
warnings about open tasks' dependencies (unknown, self-referencing, external).

Only open tasks are checked: the dependencies of ticked work no longer matter.
"""

from __future__ import annotations

from app.core.graph import behind, cycle_through, strongly_connected
from app.core.roadmap import Problem, Roadmap, Task


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
    a ticked task cannot be on a cycle, so it is left out too.
    """
    graph: dict[str, dict[str, str]] = {}
    for t in roadmap.tasks:
        if t.done:
            continue
        targets = graph.setdefault(t.id, {})
        for dep in t.requires:
            if dep in roadmap.by_id:
                named = [dep] + [a.id for a in roadmap.addenda(dep) if a.id != t.id]
            else:
                named = [m.id for m in roadmap.under(dep) if m.id != t.id]
            for target in named:
                other = roadmap.get(target)
                if other is not None and not other.done:
                    targets.setdefault(target, dep)  # an explicit self-dependency is a cycle
    return graph


def open_cycles(roadmap: Roadmap) -> list[Problem]:
    edges = _edges(roadmap)
    graph = {k: list(v) for k, v in edges.items()}
    order = {t.id: i for i, t in reversed(list(enumerate(roadmap.tasks)))}
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
