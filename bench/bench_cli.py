"""Command-line start-up: `odw --help` against the interpreter, and `odw next` at scale.

Goals (issue 12): `odw --help` at most 5x `python -c pass`; `odw next` on a
generated 5,000-task roadmap at most 2x `odw --help`. Medians of several runs,
whole processes, as a user (or local mode, for every stage) pays them.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from bench.support import generated_roadmap, time_process
from tests.conftest import odw_executable

RUNS = 7


def main() -> None:
    odw = odw_executable()
    bare = time_process([sys.executable, "-c", "pass"], runs=RUNS)
    help_ = time_process([odw, "--help"], runs=RUNS)
    print(f"odw --help {help_} vs python -c pass {bare}: {help_.ratio(bare)} (goal <= 5)")
    with tempfile.TemporaryDirectory(prefix="odw-bench-") as tmp:
        path = Path(tmp) / "roadmap.md"
        path.write_text(generated_roadmap(5000))
        nxt = time_process([odw, "next", str(path)], runs=RUNS)
    print(f"odw next on 5,000 tasks {nxt} vs odw --help {help_}: {nxt.ratio(help_)} (goal <= 2)")


if __name__ == "__main__":
    main()
