"""Tally mutmut's per-file results into one line per module, and hold the floors.

mutmut writes, beside each mutated copy under `mutants/`, a `<file>.meta` JSON
whose `exit_code_by_key` maps every mutant to its test run's exit code. A
mutant counts as killed when its tests failed (mutmut's "killed"), timed out
or were caught by the type check; one whose tests passed, or that no test
reached, survived.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

# The least share of mutants the suite must kill, per module (issue 32).
FLOORS: Mapping[str, float] = {
    "app/core/handlers.py": 0.90,
    "app/core/flow.py": 0.90,
    "app/core/outcomes.py": 0.90,
    "app/core/budgets.py": 0.90,
    "app/commands/permission.py": 0.90,
    "app/core/recovery.py": 0.95,
    "app/core/requires.py": 0.95,
    "app/core/selection.py": 0.95,
}

# mutmut's exit codes (mutmut/stats.py): 1 and 3 failed tests, 24/-24/36/152/255
# a timeout, 37 the type check; None means not run yet.
_KILLED = frozenset({1, 3, 24, -24, 36, 152, 255, 37})


@dataclass(frozen=True)
class Tally:
    module: str
    mutants: int
    killed: int
    generated: int = 0

    @property
    def share(self) -> float:
        return self.killed / self.mutants if self.mutants else 1.0

    def line(self) -> str:
        sampled = f", a sample of {self.generated}" if self.generated > self.mutants else ""
        return (
            f"mutation: {self.module}: {self.mutants} mutants, {self.killed} killed "
            f"({self.share:.0%}){sampled}"
        )


def tally(module: str, exit_codes: Mapping[str, int | None]) -> Tally:
    """One module's result over the mutants that ran (all, or a sample)."""
    run = [code for code in exit_codes.values() if code is not None]
    return Tally(module, len(run), sum(code in _KILLED for code in run), len(exit_codes))


def module_pattern(module: str) -> str:
    """mutmut's name pattern for every mutant of `app/core/flow.py`: `app.core.flow.*`."""
    return module.removesuffix(".py").replace("/", ".") + ".*"


def exit_codes(mutants: Path) -> dict[str, dict[str, int | None]]:
    """Each mutated module's `exit_code_by_key` from mutmut's `.meta` files, in path order."""
    return {
        meta.relative_to(mutants).as_posix().removesuffix(".meta"): json.loads(
            meta.read_text(encoding="utf-8")
        )["exit_code_by_key"]
        for meta in sorted(mutants.rglob("*.py.meta"))
    }


def names(mutants: Path) -> dict[str, list[str]]:
    """Every mutant's name, per module, as mutmut generated them."""
    return {module: sorted(codes) for module, codes in exit_codes(mutants).items()}


def sample(
    by_module: Mapping[str, list[str]], share: float, seed: int, skip: Iterable[str]
) -> list[str]:
    """A fixed-seed share (at least one) of each module's mutants, modules in `skip` left out."""
    rng = random.Random(seed)  # noqa: S311 (a reproducible sample, not a secret)
    left_out = set(skip)
    picked: list[str] = []
    for module, mutants in sorted(by_module.items()):
        if module in left_out or not mutants:
            continue
        picked += rng.sample(mutants, max(1, round(len(mutants) * share)))
    return picked


def read(mutants: Path) -> list[Tally]:
    """Every module mutmut mutated under `mutants`, in path order."""
    return [tally(module, codes) for module, codes in exit_codes(mutants).items()]


def below_floor(tallies: Iterable[Tally], floors: Mapping[str, float] = FLOORS) -> list[str]:
    """What falls short: a module under its floor, or a floored module not measured."""
    seen = {t.module: t for t in tallies}
    short = []
    for module, floor in floors.items():
        t = seen.get(module)
        if t is None or t.mutants == 0:
            short.append(f"{module}: not measured (floor {floor:.0%})")
        elif t.share < floor:
            short.append(f"{module}: {t.share:.0%} killed, below its floor of {floor:.0%}")
    return short
