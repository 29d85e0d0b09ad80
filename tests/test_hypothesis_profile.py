"""Under CI=true every property test draws the same examples on every run."""

from __future__ import annotations

import os
import subprocess
import sys

from tests.conftest import REPO_ROOT

PROBE = (
    "import tests.conftest\n"
    "from hypothesis import settings\n"
    "d = settings.default\n"
    "print(d.derandomize, d.database is None, d.deadline)\n"
)


def _profile(ci: str | None) -> str:
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    if ci is not None:
        env["CI"] = ci
    done = subprocess.run(
        [sys.executable, "-c", PROBE],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    return done.stdout.strip()


def test_ci_runs_draw_fixed_examples_without_a_database_or_deadline() -> None:
    assert _profile("true") == "True True None"


def test_runs_outside_ci_keep_exploring() -> None:
    assert _profile(None).startswith("False False")
