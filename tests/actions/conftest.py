"""Fixtures for the runner: real git repositories and fake agents written per test."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from app.core.verdict import Verdict
from tests.support import git

ROADMAP = """\
## 1. Runner

### 1.1. Stages

- [ ] 1.1.1. Add a greeting module
  - Success: `hello()` returns "hi".
- [ ] 1.1.2. Add a farewell module
  - Requires 1.1.1.
"""


@dataclass
class Repo:
    origin: Path
    clone: Path

    def origin_head(self, branch: str) -> str | None:
        proc = subprocess.run(
            ["git", "rev-parse", "--verify", "-q", f"refs/heads/{branch}"],
            cwd=self.origin,
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
        return proc.stdout.strip() or None


@pytest.fixture
def repo(tmp_path: Path) -> Repo:
    """A bare origin with `main` holding a roadmap, and a clone on roadmap-1-1-1."""
    origin = tmp_path / "origin.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(origin))
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(origin), str(clone))
    (clone / "docs").mkdir()
    (clone / "docs" / "roadmap.md").write_text(ROADMAP)
    (clone / "README.md").write_text("demo\n")
    git(clone, "add", ".")
    git(clone, "commit", "-q", "-m", "init")
    git(clone, "push", "-q", "origin", "HEAD:refs/heads/main")
    git(clone, "checkout", "-q", "-b", "roadmap-1-1-1")
    return Repo(origin, clone)


AgentFactory = Callable[[str, str], Path]


@pytest.fixture
def make_agent(tmp_path: Path) -> AgentFactory:
    """Write a fake agent (a Python script) outside the checkout; returns its path."""
    folder = tmp_path / "agents"
    folder.mkdir()

    def make(name: str, body: str) -> Path:
        path = folder / name
        path.write_text(f"#!{sys.executable}\n" + textwrap.dedent(body))
        path.chmod(path.stat().st_mode | stat.S_IXUSR)
        return path

    return make


def alive(pid: int) -> bool:
    """True while `pid` runs (a zombie waiting to be reaped counts as gone)."""
    try:
        raw = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return False
    state = raw[raw.rfind(b")") + 2 :].split()[0]
    return state not in (b"Z", b"X")


def group_members(pgid: int) -> list[int]:
    out = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            raw = Path(f"/proc/{name}/stat").read_bytes()
        except OSError:
            continue
        rest = raw[raw.rfind(b")") + 2 :].split()
        if int(rest[2]) == pgid and rest[0] not in (b"Z", b"X"):
            out.append(int(name))
    return out


@dataclass
class StageResult:
    code: int
    stdout: str
    stderr: str
    verdict: Verdict | None
    out_dir: Path

    @property
    def data(self) -> dict:
        return json.loads((self.out_dir / "verdict.json").read_text())


@pytest.fixture
def stage(run_odw, tmp_path: Path) -> Callable[..., StageResult]:
    """Run `odw stage` as the action would, with short deadlines; parse the verdict."""
    counter = iter(range(1000))

    def run(
        workdir: Path,
        agent: Path | str,
        *extra: str,
        stage: str = "implement",
        task: str = "1.1.1",
        token: str = "tok-current-1",  # noqa: S107 (an attempt token, not a secret)
        deadline: float = 3,
        grace: float = 0.5,
        env: dict[str, str] | None = None,
    ) -> StageResult:
        out_dir = tmp_path / f"out{next(counter)}"
        proc = run_odw(
            "stage",
            "--stage",
            stage,
            "--task",
            task,
            "--token",
            token,
            "--workdir",
            str(workdir),
            "--agent",
            str(agent),
            "--deadline",
            str(deadline),
            "--grace",
            str(grace),
            "--out",
            str(out_dir / "verdict.json"),
            "--quiet",
            *extra,
            env={**os.environ, **(env or {})},
            timeout=60,
        )
        path = out_dir / "verdict.json"
        verdict = Verdict.model_validate_json(path.read_bytes()) if path.exists() else None
        return StageResult(proc.returncode, proc.stdout, proc.stderr, verdict, out_dir)

    return run
