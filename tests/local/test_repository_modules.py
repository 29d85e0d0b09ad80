"""Local mode on repositories whose root holds modules named like ODW's own.

`python -m` would put the task worktree first on the runner's import path:
an `app/` package there would run as ODW's runner (outside containment, with
the push token), and `concurrent.py` or `logging.py` would break it. Each
module here leaves a file behind and stops the process if it is ever imported
(`tests/hostile_modules.py`).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.hostile_modules import HOSTILE, module_text, plant
from tests.local.conftest import AGENT, FAST, Project, make_project
from tests.support import git

pytestmark = pytest.mark.slow

ROADMAP = "## 1. Work\n\n- [ ] 1.1. Writes its file\n"


def project(tmp_path: Path) -> tuple[Project, Path]:
    root = tmp_path / "p"
    root.mkdir()
    markers = tmp_path / "imported"
    markers.mkdir()
    return make_project(root, ROADMAP, {"config": FAST}), markers


def test_a_repository_with_app_concurrent_and_logging_at_its_root_lands(tmp_path: Path) -> None:
    p, markers = project(tmp_path)
    plant(p.clone, markers)
    git(p.clone, "add", "-A")
    git(p.clone, "commit", "-q", "-m", "modules named like ODW's")
    git(p.clone, "push", "-q", "origin", "main")

    code, data, stderr = p.run_json()

    assert code == 0, stderr
    assert data["processed"] == ["1.1"]
    assert p.landings() == ["1.1"]
    assert list(markers.iterdir()) == []


def test_an_agent_that_commits_an_app_package_cannot_run_code_in_the_runner(
    tmp_path: Path,
) -> None:
    """The implementing agent adds the modules; the review lanes' runners then
    start in worktrees of the task branch that hold them."""
    p, markers = project(tmp_path)
    agent = tmp_path / "planting_agent.py"
    agent.write_text(
        "import os, pathlib, sys\n"
        "if os.environ['ODW_STAGE'] == 'implement':\n"
        + "".join(
            f"    pathlib.Path({path!r}).parent.mkdir(exist_ok=True)\n"
            f"    pathlib.Path({path!r}).write_text({module_text(markers, name)!r})\n"
            for path, name in HOSTILE.items()
        )
        + f"os.execv(sys.executable, [sys.executable, *{AGENT.split()[1:]!r}])\n"
    )

    code, data, stderr = p.run_json("--agent", f"{sys.executable} {agent}")

    assert code == 0, stderr
    assert data["processed"] == ["1.1"]
    assert p.landings() == ["1.1"]
    assert git(p.origin, "show", "main:app/__init__.py").startswith("open(")
    assert list(markers.iterdir()) == []
