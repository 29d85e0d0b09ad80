"""Generated repositories for local mode: a bare origin with a roadmap, and a clone."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.actions.conftest import make_agent, repo  # noqa: F401 - fixtures for the stage runner
from tests.conftest import REPO_ROOT, odw_executable
from tests.support import git

SCRIPTED_AGENT = REPO_ROOT / "examples" / "agents" / "scripted_agent.py"
AGENT = f"{sys.executable} {SCRIPTED_AGENT}"
# Deadlines that stop a hung stage; a stage here takes seconds, but tens of
# seconds on a loaded 2-core machine, so they leave room for that.
AGENT_STAGES = ("plan", "design-review", "implement", "review", "fix")
FAST = {"stageDeadlines": dict.fromkeys(AGENT_STAGES, 60)}


@dataclass
class Project:
    root: Path
    origin: Path
    clone: Path
    state: Path  # the scripted agent's counters (outside every checkout)
    script: Path
    env: dict[str, str] = field(default_factory=dict)

    def set_script(self, script: dict[str, Any]) -> None:
        self.script.write_text(json.dumps(script))

    def argv(self, *extra: str) -> list[str]:
        return [odw_executable(), "run", "--local", str(self.clone), "--agent", AGENT, *extra]

    def run(self, *extra: str, timeout: float = 150) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            self.argv(*extra),
            capture_output=True,
            text=True,
            timeout=timeout,
            env={**os.environ, **self.env},
            check=False,
        )

    def run_json(self, *extra: str) -> tuple[int, dict[str, Any], str]:
        proc = self.run("--json", *extra)
        try:
            data = json.loads(proc.stdout)
        except ValueError:
            raise AssertionError(f"no JSON on stdout: {proc.stdout!r} {proc.stderr!r}") from None
        return proc.returncode, data, proc.stderr

    # -- what origin says ---------------------------------------------------
    def origin_branches(self) -> set[str]:
        out = git(self.origin, "for-each-ref", "--format=%(refname:short)", "refs/heads")
        return set(out.split())

    def landings(self, base: str = "main") -> list[str]:
        """ODW-Task trailer values of the commits on origin's base, oldest first."""
        out = git(
            self.origin,
            "log",
            "--reverse",
            "--format=%(trailers:key=ODW-Task,valueonly,separator=%x2c)",
            base,
        )
        return [line.strip() for line in out.splitlines() if line.strip()]

    def landing_counts(self) -> Counter[str]:
        return Counter(self.landings())

    def roadmap_on_origin(self, base: str = "main") -> str:
        return git(self.origin, "show", f"{base}:docs/roadmap.md")


def make_project(
    root: Path, roadmap: str, odw: dict[str, Any] | None = None, *, base: str = "main"
) -> Project:
    origin = root / "origin.git"
    git(root, "init", "-q", "--bare", "-b", base, str(origin))
    seed = root / "seed"
    git(root, "clone", "-q", str(origin), str(seed))
    git(seed, "checkout", "-q", "-b", base)
    (seed / "docs").mkdir()
    (seed / "docs" / "roadmap.md").write_text(roadmap)
    (seed / "README.md").write_text("a project ODW works on\n")
    if odw is not None:
        (seed / ".github").mkdir()
        (seed / ".github" / "odw.yml").write_text(yaml.safe_dump(odw))
    git(seed, "add", "-A")
    git(seed, "commit", "-q", "-m", "initial roadmap")
    git(seed, "push", "-q", "origin", base)
    clone = root / "clone"
    git(root, "clone", "-q", str(origin), str(clone))
    state = root / "agent-state"
    state.mkdir()
    script = root / "agent-script.json"
    script.write_text("{}")
    env = {"SCRIPTED_AGENT_SCRIPT": str(script), "SCRIPTED_AGENT_STATE": str(state)}
    return Project(root, origin, clone, state, script, env)


@pytest.fixture
def project_factory(tmp_path: Path):  # type: ignore[no-untyped-def]
    def make(roadmap: str, odw: dict[str, Any] | None = None, **kw: Any) -> Project:
        root = tmp_path / f"p{len(list(tmp_path.iterdir()))}"
        root.mkdir()
        return make_project(root, roadmap, odw, **kw)

    return make


def result_of(data: dict[str, Any], task: str) -> dict[str, Any]:
    return next(r for r in data["results"] if r["id"] == task)
