"""Run mutmut over the core (see `[tool.mutmut]` in pyproject.toml) from a clean
`mutants/`, print one line per module, and fail when a module is below its floor.

A clean start because mutmut keeps a mutant's old result while its function is
unchanged, so a survivor would never meet a test written since.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from mutation.report import below_floor, read

ROOT = Path(__file__).resolve().parents[1]
MUTANTS = ROOT / "mutants"


def main() -> int:
    shutil.rmtree(MUTANTS, ignore_errors=True)
    MUTANTS.mkdir()
    # The fake GitHub's oracles live in the checkout's gitignored .cache; the
    # mutated copy's tests find them through this link.
    (MUTANTS / ".cache").symlink_to(ROOT / ".cache", target_is_directory=True)
    env = dict(os.environ)
    # Under CI=true a missing resource fails a test; the corpus beside the
    # checkout is not beside the copy, and mutation asks nothing of it.
    env.pop("CI", None)
    children = os.environ.get("MUTATION_WORKERS", str(os.cpu_count() or 2))
    mutmut = Path(sys.executable).with_name("mutmut")
    log = MUTANTS / "mutmut.log"
    print(f"mutation: mutmut on {children} workers (progress in {log.relative_to(ROOT)})")
    with log.open("wb") as out:
        done = subprocess.run(
            [str(mutmut), "run", "--max-children", children],
            cwd=ROOT,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            check=False,
        )
    if done.returncode != 0:
        print(f"mutation: mutmut exited with {done.returncode}; see {log}", file=sys.stderr)
        return 1
    tallies = read(MUTANTS)
    for t in tallies:
        print(t.line())
    short = below_floor(tallies)
    for why in short:
        print(f"mutation: below floor: {why}", file=sys.stderr)
    return 1 if short else 0


if __name__ == "__main__":
    sys.exit(main())
