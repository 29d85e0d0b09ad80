"""Roadmap parsing and selection throughput on a large generated roadmap."""

from __future__ import annotations

import time

from app.core.roadmap import parse_roadmap
from app.core.selection import frontier


def _roadmap(phases: int, steps: int, tasks: int) -> str:
    lines = []
    for p in range(1, phases + 1):
        lines.append(f"## {p}. Phase {p}\n")
        for s in range(1, steps + 1):
            lines.append(f"### {p}.{s}. Step\n")
            for t in range(1, tasks + 1):
                mark = "x" if (p + s + t) % 3 == 0 else " "
                lines.append(f"- [{mark}] {p}.{s}.{t}. Task {p}.{s}.{t} with a title that wraps")
                lines.append("  onto a second line.")
                if t > 1:
                    lines.append(f"  - Requires {p}.{s}.{t - 1}.")
                elif p > 1:
                    lines.append(f"  - Requires phase {p - 1}.")
                lines.append("  - Success: it is done.")
    return "\n".join(lines) + "\n"


def main() -> None:
    text = _roadmap(20, 10, 10)
    n = 2000
    start = time.perf_counter()
    rm = parse_roadmap(text)
    parsed = time.perf_counter() - start
    start = time.perf_counter()
    f = frontier(rm)
    selected = time.perf_counter() - start
    print(f"roadmap tasks={len(rm.tasks)} (expected {n}) bytes={len(text)}")
    print(
        f"parse+validate: {parsed * 1000:.1f} ms; frontier: {selected * 1000:.1f} ms "
        f"(ready={len(f.ready)}, blocked={len(f.blocked)})"
    )
