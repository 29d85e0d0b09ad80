"""Roadmap parsing and selection throughput on a large generated roadmap."""

from __future__ import annotations

import time

from app.core.roadmap_parse import parse_roadmap
from app.core.selection import frontier
from bench.support import generated_roadmap


def main() -> None:
    n = 2000
    text = generated_roadmap(n)
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
