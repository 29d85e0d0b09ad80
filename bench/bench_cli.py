"""Command-line start-up: `odw --help` against the interpreter, and `odw next` at scale.

Goals (issue 12): `odw --help` at most 5x `python -c pass`; `odw next` on a
generated 5,000-task roadmap at most 2x `odw --help`. Whole processes, as a
user (or local mode, for every stage) pays them; medians of several runs,
the commands taken in turn so that they meet the same load. `odw next` is
timed twice: on a roadmap it has read before (its parse cached, as for every
read after the first; the goal) and on a first read (an empty cache). The
`app` package is byte-compiled first, as installing it does.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

from bench.support import compile_like_an_install, generated_roadmap, medians, run_timed
from tests.conftest import odw_executable

RUNS = 15


def main() -> None:
    compile_like_an_install()
    odw = odw_executable()
    with tempfile.TemporaryDirectory(prefix="odw-bench-") as tmp:
        root = Path(tmp)
        roadmap = root / "roadmap.md"
        roadmap.write_text(generated_roadmap(5000))
        nxt = [odw, "next", str(roadmap)]
        cached = {**os.environ, "ODW_CACHE_DIR": str(root / "cache")}
        expected = run_timed(nxt, env=cached)[0].stdout  # the first read fills the cache
        samples: dict[str, list[tuple[float, float]]] = {}
        for i in range(RUNS):
            first = {**os.environ, "ODW_CACHE_DIR": str(root / f"empty-{i}")}
            for name, argv, env in [
                ("bare", [sys.executable, "-c", "pass"], None),
                ("help", [odw, "--help"], None),
                ("again", nxt, cached),
                ("first", nxt, first),
            ]:
                result, wall, cpu = run_timed(argv, env=env)
                if env is not None and result.stdout != expected:
                    raise SystemExit(f"odw next printed something else on run {i} ({name})")
                samples.setdefault(name, []).append((wall, cpu))
    bare, help_, again, first = (medians(samples[k]) for k in ("bare", "help", "again", "first"))
    print(f"odw --help {help_} vs python -c pass {bare}: {help_.ratio(bare)} (goal <= 5)")
    print(
        f"odw next on 5,000 tasks, read before {again} vs odw --help {help_}: "
        f"{again.ratio(help_)} (goal <= 2)"
    )
    print(f"odw next on 5,000 tasks, first read {first} vs odw --help: {first.ratio(help_)}")


if __name__ == "__main__":
    main()
