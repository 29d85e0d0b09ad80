"""Run mutmut over the core (see `[tool.mutmut]` in pyproject.toml) from a clean
`mutants/`, print one line per module, and fail when a module is below its floor.

The modules with a floor run every mutant; the rest of the core runs a
fixed-seed sample (`MUTATION_SAMPLE`, default a fifth) so the whole takes
minutes, not an hour, on two cores. A clean start because mutmut keeps a
mutant's old result while its function is unchanged, so a survivor would
never meet a test written since.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from mutation.report import FLOORS, below_floor, module_pattern, names, read, sample

ROOT = Path(__file__).resolve().parents[1]
MUTANTS = ROOT / "mutants"
SEED = 32


def mutmut(*args: str) -> bool:
    """One `mutmut run`, its output appended to mutants/mutmut.log."""
    env = dict(os.environ)
    # Under CI=true a missing resource fails a test; the corpus beside the
    # checkout is not beside the copy, and mutation asks nothing of it.
    env.pop("CI", None)
    children = os.environ.get("MUTATION_WORKERS", str(os.cpu_count() or 2))
    command = [str(Path(sys.executable).with_name("mutmut")), "run", "--max-children", children]
    with (MUTANTS / "mutmut.log").open("ab") as log:
        done = subprocess.run(
            [*command, *args], cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, check=False
        )
    return done.returncode == 0


def main() -> int:
    shutil.rmtree(MUTANTS, ignore_errors=True)
    MUTANTS.mkdir()
    # The fake GitHub's oracles live in the checkout's gitignored .cache; the
    # mutated copy's tests find them through this link.
    (MUTANTS / ".cache").symlink_to(ROOT / ".cache", target_is_directory=True)
    print("mutation: running mutmut (progress in mutants/mutmut.log)", flush=True)
    if not mutmut(*(module_pattern(m) for m in FLOORS)):
        print("mutation: mutmut failed; see mutants/mutmut.log", file=sys.stderr)
        return 1
    share = float(os.environ.get("MUTATION_SAMPLE", "0.2"))
    rest = sample(names(MUTANTS), share, SEED, skip=FLOORS)
    if rest and not mutmut(*rest):
        print("mutation: mutmut failed on the sample; see mutants/mutmut.log", file=sys.stderr)
        return 1
    tallies = [t for t in read(MUTANTS) if t.mutants]
    for t in tallies:
        print(t.line())
    short = below_floor(tallies)
    for why in short:
        print(f"mutation: below floor: {why}", file=sys.stderr)
    return 1 if short else 0


if __name__ == "__main__":
    sys.exit(main())
