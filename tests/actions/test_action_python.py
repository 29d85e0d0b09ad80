"""The action's own Python runs in the job's checkout, and never imports from it.

Its steps start in `$GITHUB_WORKSPACE`, the repository's checkout: `python -m`
and `python -` put that directory first on the import path, so a committed
`app/`, `venv/` or `pip/` would run as the action's code.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import yaml

from tests.conftest import REPO_ROOT
from tests.hostile_modules import plant

STEPS = yaml.safe_load((REPO_ROOT / "action.yml").read_text())["runs"]["steps"]
# A Python interpreter called in a step's script, and the first word after it.
PYTHON_CALL = re.compile(r"""(?:^|[\s$(])"?[^\s"(]*\bpython3?"?[ \t]+(\S+)""", re.MULTILINE)


def test_every_python_the_action_runs_is_isolated_from_the_checkout() -> None:
    calls = [
        (step.get("name"), first)
        for step in STEPS
        for first in PYTHON_CALL.findall(step.get("run", ""))
    ]
    assert len(calls) == 3, calls  # python -m venv, pip install, the artifact's name
    assert [first for _, first in calls] == ["-I"] * len(calls), calls


def test_naming_the_artifact_in_a_checkout_with_an_app_package(tmp_path: Path) -> None:
    """The `names` step, run as the runner would: bash, in the checkout."""
    (names,) = (step for step in STEPS if step.get("id") == "names")
    checkout, markers, runner_temp = tmp_path / "checkout", tmp_path / "imported", tmp_path / "t"
    for folder in (checkout, markers, runner_temp / "odw-venv" / "bin"):
        folder.mkdir(parents=True)
    plant(checkout, markers)
    # The venv the install step made: here, the interpreter running the tests.
    python = runner_temp / "odw-venv" / "bin" / "python"
    python.write_text(f'#!/bin/sh\nexec {sys.executable} "$@"\n')
    python.chmod(0o755)
    output = tmp_path / "github-output"
    output.touch()
    env = {
        **os.environ,
        "RUNNER_TEMP": str(runner_temp),
        "GITHUB_OUTPUT": str(output),
        "ODW_IN_TASK": "1.2.3",
        "ODW_IN_TOKEN": "tok_en-123",
    }
    proc = subprocess.run(
        ["bash", "-e", "-c", names["run"]],
        cwd=checkout,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert output.read_text().splitlines() == [
        "artifact=odw-verdict",
        f"dir={runner_temp}/odw-1-2-3-tok_en-123",
    ]
    assert list(markers.iterdir()) == []
