"""Command-line start-up: `odw --help` against the interpreter, and `odw next` at scale.

Goals (issue 12): `odw --help` at most 5x `python -c pass`; `odw next` on a
generated 5,000-task roadmap at most 2x `odw --help`. Medians of several runs,
whole processes, as a user (or local mode, for every stage) pays them.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tests.conftest import odw_executable

RUNS = 7


def generated_roadmap(tasks: int) -> str:
    """Phases of steps of tasks, each waiting for the one before it, a third ticked."""
    lines = []
    per_step, steps = 10, 10
    phases = max(1, tasks // (per_step * steps))
    for p in range(1, phases + 1):
        lines.append(f"## {p}. Phase {p}\n")
        for s in range(1, steps + 1):
            lines.append(f"### {p}.{s}. Step\n")
            for t in range(1, per_step + 1):
                mark = "x" if (p + s + t) % 3 == 0 else " "
                lines.append(f"- [{mark}] {p}.{s}.{t}. Task {p}.{s}.{t} with a wrapped")
                lines.append("  title line.")
                if t > 1:
                    lines.append(f"  - Requires {p}.{s}.{t - 1}.")
                elif p > 1:
                    lines.append(f"  - Requires phase {p - 1}.")
                lines.append("  - Success: it is done.")
    return "\n".join(lines) + "\n"


def median_seconds(argv: list[str]) -> float:
    times = []
    for _ in range(RUNS):
        start = time.perf_counter()
        subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    odw = odw_executable()
    bare = median_seconds([sys.executable, "-c", "pass"])
    help_ = median_seconds([odw, "--help"])
    print(
        f"odw --help {help_ * 1000:.0f} ms vs python -c pass {bare * 1000:.0f} ms: "
        f"x{help_ / bare:.1f} (goal <= 5)"
    )
    with tempfile.TemporaryDirectory(prefix="odw-bench-") as tmp:
        path = Path(tmp) / "roadmap.md"
        path.write_text(generated_roadmap(5000))
        nxt = median_seconds([odw, "next", str(path)])
    print(
        f"odw next on 5,000 tasks {nxt * 1000:.0f} ms vs odw --help {help_ * 1000:.0f} ms: "
        f"x{nxt / help_:.1f} (goal <= 2)"
    )


if __name__ == "__main__":
    main()
