"""Real git repositories for the integration tests and the benchmark.

`Origin` is a bare repository in a temporary directory with a base branch that
holds a roadmap, plus helpers to make task branches, push external commits and
read back what landed. Everything goes through the real `git` binary.
"""

from __future__ import annotations

import os
import subprocess
import uuid
from dataclasses import dataclass
from pathlib import Path

GIT_ENV = {
    "GIT_AUTHOR_NAME": "Test Author",
    "GIT_AUTHOR_EMAIL": "author@example.invalid",
    "GIT_COMMITTER_NAME": "Test Author",
    "GIT_COMMITTER_EMAIL": "author@example.invalid",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_TERMINAL_PROMPT": "0",
    "LC_ALL": "C",
}


def git(*args: str, cwd: Path | None = None, check: bool = True, timeout: float = 30) -> str:
    result = subprocess.run(
        ["git", "-c", "init.defaultBranch=main", "-c", "core.hooksPath=/dev/null", *args],
        cwd=cwd,
        env={**os.environ, **GIT_ENV},
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    if check and result.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed: {result.stderr}")
    return result.stdout


def roadmap_text(task_ids: list[str]) -> str:
    lines = ["# Roadmap", "", "## 1. Phase one", "", "### 1.1. Step one", ""]
    for tid in task_ids:
        lines.append(f"- [ ] {tid}. Build part {tid}")
        lines.append(f"  - Success: part {tid} exists.")
    return "\n".join(lines) + "\n"


PROTECTION_HOOK = """#!/bin/sh
# Behaves like branch protection: direct pushes to refs/heads/{base} are declined
# unless the pusher sends the push option `{option}`.
i=0
while [ "$i" -lt "${{GIT_PUSH_OPTION_COUNT:-0}}" ]; do
  eval "opt=\\$GIT_PUSH_OPTION_$i"
  [ "$opt" = "{option}" ] && exit 0
  i=$((i + 1))
done
while read old new ref; do
  if [ "$ref" = "refs/heads/{base}" ]; then
    echo "error: GH006: Protected branch update failed for refs/heads/{base}." >&2
    echo "error: Changes must be made through a pull request." >&2
    exit 1
  fi
done
exit 0
"""


@dataclass
class Origin:
    """A bare origin with `base` holding `docs/roadmap.md` and a README."""

    path: Path
    scratch: Path
    base: str = "main"

    @classmethod
    def create(cls, root: Path, task_ids: list[str], base: str = "main") -> Origin:
        path = root / "origin.git"
        scratch = root / "scratch"
        scratch.mkdir(parents=True)
        git("init", "--bare", "--quiet", str(path))
        git("config", "receive.advertisePushOptions", "true", cwd=path)
        seed = scratch / "seed"
        git("init", "--quiet", "-b", base, str(seed))
        (seed / "docs").mkdir()
        (seed / "docs" / "roadmap.md").write_text(roadmap_text(task_ids))
        (seed / "README.md").write_text("demo\n")
        (seed / "shared.txt").write_text("line one\nline two\nline three\n")
        git("add", "-A", cwd=seed)
        git("commit", "--quiet", "-m", "seed", cwd=seed)
        git("push", "--quiet", str(path), f"HEAD:refs/heads/{base}", cwd=seed)
        return cls(path=path, scratch=scratch, base=base)

    def clone(self) -> Path:
        work = self.scratch / f"clone-{uuid.uuid4().hex[:8]}"
        git("clone", "--quiet", "--branch", self.base, str(self.path), str(work))
        return work

    def task_branch(self, task_id: str, files: dict[str, str] | None = None) -> str:
        """Push `roadmap-<slug>` with two commits (its files) branched from the base."""
        branch = "roadmap-" + task_id.replace(".", "-")
        work = self.clone()
        git("switch", "--quiet", "-c", branch, cwd=work)
        files = files or {f"parts/{task_id}.txt": f"part {task_id}\n"}
        for i, (name, content) in enumerate(files.items()):
            target = work / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(content)
            git("add", "--", name, cwd=work)
            git("commit", "--quiet", "-m", f"{task_id}: step {i}", cwd=work)
        git("push", "--quiet", "origin", branch, cwd=work)
        return branch

    def external_commit(self, work: Path, name: str, content: str) -> str | None:
        """One commit by someone else pushed to the base; None when it lost a race."""
        git("fetch", "--quiet", "origin", cwd=work)
        git("reset", "--quiet", "--hard", f"origin/{self.base}", cwd=work)
        (work / name).parent.mkdir(parents=True, exist_ok=True)
        (work / name).write_text(content)
        git("add", "--", name, cwd=work)
        git("commit", "--quiet", "-m", f"external: {name}", cwd=work)
        pushed = git("push", "--quiet", "origin", f"HEAD:{self.base}", cwd=work, check=False)
        del pushed
        head = git("rev-parse", "HEAD", cwd=work).strip()
        remote = git("ls-remote", str(self.path), f"refs/heads/{self.base}").split()[0]
        return head if remote == head else None

    def protect(self, option: str = "odw-bypass") -> None:
        hook = self.path / "hooks" / "pre-receive"
        hook.write_text(PROTECTION_HOOK.format(base=self.base, option=option))
        hook.chmod(0o755)

    # reading back what landed -------------------------------------------------

    def head(self, ref: str | None = None) -> str:
        return git("rev-parse", f"refs/heads/{ref or self.base}", cwd=self.path).strip()

    def refs(self) -> dict[str, str]:
        out = git("for-each-ref", "--format=%(refname) %(objectname)", cwd=self.path)
        return dict(line.split(" ", 1) for line in out.splitlines())  # type: ignore[misc]

    def log(self) -> list[tuple[str, str, list[str]]]:
        """(sha, message, parents) of every commit on the base, newest first."""
        out = git("log", "--format=%H%x1f%P%x1f%B%x1e", self.base, cwd=self.path)
        rows = []
        for record in out.split("\x1e"):
            record = record.strip("\n")
            if record:
                sha, parents, body = record.split("\x1f", 2)
                rows.append((sha, body, parents.split()))
        return rows

    def task_commits(self, task_id: str) -> list[str]:
        return [sha for sha, body, _ in self.log() if f"\nODW-Task: {task_id}\n" in body + "\n"]

    def roadmap(self) -> str:
        return git("show", f"{self.base}:docs/roadmap.md", cwd=self.path)

    def files(self, ref: str | None = None) -> list[str]:
        out = git("ls-tree", "-r", "--name-only", ref or self.base, cwd=self.path)
        return out.split()
