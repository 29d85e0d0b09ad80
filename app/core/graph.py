"""Graph algorithms the roadmap model needs: strongly connected parts, one cycle."""

from __future__ import annotations

from collections import deque


def strongly_connected(graph: dict[str, list[str]]) -> list[list[str]]:
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


def cycle_through(graph: dict[str, list[str]], start: str, within: set[str]) -> list[str]:
    """A shortest cycle from `start` back to itself inside `within` (start listed once)."""
    came: dict[str, str] = {}
    queue = deque([start])
    while queue:
        node = queue.popleft()
        for nxt in graph.get(node, []):
            if nxt not in within:
                continue
            if nxt == start:
                path = [node]
                while path[-1] != start:
                    path.append(came[path[-1]])
                return path[::-1]
            if nxt not in came:
                came[nxt] = node
                queue.append(nxt)
    return [start]


def behind(graph: dict[str, list[str]], targets: set[str]) -> set[str]:
    """Nodes that reach any of `targets` (the targets excluded)."""
    reverse: dict[str, list[str]] = {}
    for node, succs in graph.items():
        for s in succs:
            reverse.setdefault(s, []).append(node)
    seen: set[str] = set()
    queue = deque(targets)
    while queue:
        for prev in reverse.get(queue.popleft(), []):
            if prev not in seen and prev not in targets:
                seen.add(prev)
                queue.append(prev)
    return seen
