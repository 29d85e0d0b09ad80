"""Missing PostgreSQL, oracles or corpus: a skip that says how to enable it, a failure in CI."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT

CASE = """
from tests import needs

def test_needs_postgres():
    needs.unavailable(needs.POSTGRES)
"""


def _run(tmp_path: Path, ci: str | None) -> subprocess.CompletedProcess[str]:
    (tmp_path / "test_case.py").write_text(CASE)
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    env["PYTHONPATH"] = str(REPO_ROOT)
    if ci is not None:
        env["CI"] = ci
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider", "-p", "no:xdist",
         str(tmp_path / "test_case.py")],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip


@pytest.mark.parametrize("ci", [None, "false"], ids=["ci-unset", "ci-false"])
def test_outside_ci_a_missing_service_skips_and_says_how_to_enable_it(
    tmp_path: Path, ci: str | None
) -> None:
    done = _run(tmp_path, ci)
    assert done.returncode == 0, done.stdout
    assert "1 skipped" in done.stdout
    assert "set ODW_TEST_DATABASE_URL=" in done.stdout


def test_in_ci_a_missing_service_fails(tmp_path: Path) -> None:
    done = _run(tmp_path, "true")
    assert done.returncode == 1, done.stdout
    assert "1 failed" in done.stdout
    assert "CI=true, and no PostgreSQL" in done.stdout
