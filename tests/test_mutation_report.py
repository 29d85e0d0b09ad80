"""`make mutation`'s report: one line per module from mutmut's results, and the floors."""

from __future__ import annotations

import json
from pathlib import Path

from mutation.report import Tally, below_floor, module_pattern, read, sample, tally


def _meta(root: Path, module: str, codes: dict[str, int | None]) -> None:
    path = root / f"{module}.meta"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"exit_code_by_key": codes, "durations_by_key": {}}))


def test_one_line_per_module_counts_failed_timed_out_and_type_caught_as_killed(
    tmp_path: Path,
) -> None:
    _meta(tmp_path, "app/core/flow.py", {"a": 1, "b": 0, "c": 24, "d": 37, "e": 33})
    _meta(tmp_path, "app/core/budgets.py", {"a": 1, "b": None})
    lines = [t.line() for t in read(tmp_path)]
    assert lines == [
        "mutation: app/core/budgets.py: 1 mutants, 1 killed (100%), a sample of 2",
        # 33 is "no tests": no test reached the mutant, so it survived.
        "mutation: app/core/flow.py: 5 mutants, 3 killed (60%)",
    ]


def test_a_module_below_its_floor_or_not_measured_falls_short() -> None:
    floors = {"app/core/flow.py": 0.9, "app/core/recovery.py": 0.95}
    short = below_floor([Tally("app/core/flow.py", 10, 8)], floors)
    assert short == [
        "app/core/flow.py: 80% killed, below its floor of 90%",
        "app/core/recovery.py: not measured (floor 95%)",
    ]
    enough = [Tally("app/core/flow.py", 10, 9), Tally("app/core/recovery.py", 20, 19)]
    assert below_floor(enough, floors) == []


def test_a_module_with_nothing_run_is_not_a_division_by_zero() -> None:
    assert tally("app/core/x.py", {"a": None}).share == 1.0


def test_a_sampled_module_says_how_many_mutants_it_was_drawn_from(tmp_path: Path) -> None:
    _meta(tmp_path, "app/core/state.py", {"a": 1, "b": None, "c": 0, "d": None})
    [t] = read(tmp_path)
    assert t.line() == "mutation: app/core/state.py: 2 mutants, 1 killed (50%), a sample of 4"


def test_the_sample_is_fixed_by_its_seed_and_leaves_the_floored_modules_whole() -> None:
    by_module = {
        "app/core/flow.py": [f"flow_{i}" for i in range(50)],
        "app/core/state.py": [f"state_{i}" for i in range(100)],
        "app/core/keys.py": ["keys_1"],
    }
    picked = sample(by_module, 0.2, seed=7, skip=["app/core/flow.py"])
    assert picked == sample(by_module, 0.2, seed=7, skip=["app/core/flow.py"])
    assert picked != sample(by_module, 0.2, seed=8, skip=["app/core/flow.py"])
    assert not [n for n in picked if n.startswith("flow_")]
    assert len([n for n in picked if n.startswith("state_")]) == 20
    assert "keys_1" in picked  # a small module still gets one


def test_a_module_path_names_its_mutants() -> None:
    assert module_pattern("app/commands/permission.py") == "app.commands.permission.*"
