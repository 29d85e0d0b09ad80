"""Real git repositories for the integration tests and the benchmark.

`Origin` is a bare repository in a temporary directory with a base branch that
holds a roadmap, plus helpers to make task branches, push external commits and
read back what landed. Everything goes through the real `git` binary.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from pathlib import Path

from tests.support import git


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
        git(None, "init", "--bare", "--quiet", str(path))
        git(path, "config", "receive.advertisePushOptions", "true")
        seed = scratch / "seed"
        git(None, "init", "--quiet", "-b", base, str(seed))
        (seed / "docs").mkdir()
        (seed / "docs" / "roadmap.md").write_text(roadmap_text(task_ids))
        (seed / "README.md").write_text("demo\n")
        (seed / "shared.txt").write_text("line one\nline two\nline three\n")
        git(seed, "add", "-A")
        git(seed, "commit", "--quiet", "-m", "seed")
        git(seed, "push", "--quiet", str(path), f"HEAD:refs/heads/{base}")
        return cls(path=path, scratch=scratch, base=base)

    def clone(self) -> Path:
        work = self.scratch / f"clone-{uuid.uuid4().hex[:8]}"
        git(None, "clone", "--quiet", "--branch", self.base, str(self.path), str(work))
        return work

    def task_branch(self, task_id: str, files: dict[str, str] | None = None) -> str:
        """Push `roadmap-<slug>` with two commits (its files) branched from the base."""
        branch = "roadmap-" + task_id.replace(".", "-")
        work = self.clone()
        git(work, "switch", "--quiet", "-c", branch)
        files = files or {f"parts/{task_id}.txt": f"part {task_id}\n"}
        for i, (name, content) in enumerate(files.items()):
            target = work / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(content)
            git(work, "add", "--", name)
            git(work, "commit", "--quiet", "-m", f"{task_id}: step {i}")
        git(work, "push", "--quiet", "origin", branch)
        return branch

    def external_commit(self, work: Path, name: str, content: str) -> str | None:
        """One commit by someone else pushed to the base; None when it lost a race."""
        git(work, "fetch", "--quiet", "origin")
        git(work, "reset", "--quiet", "--hard", f"origin/{self.base}")
        (work / name).parent.mkdir(parents=True, exist_ok=True)
        (work / name).write_text(content)
        git(work, "add", "--", name)
        git(work, "commit", "--quiet", "-m", f"external: {name}")
        pushed = git(work, "push", "--quiet", "origin", f"HEAD:{self.base}", check=False)
        del pushed
        head = git(work, "rev-parse", "HEAD").strip()
        remote = git(None, "ls-remote", str(self.path), f"refs/heads/{self.base}").split()[0]
        return head if remote == head else None

    def protect(self, option: str = "odw-bypass") -> None:
        hook = self.path / "hooks" / "pre-receive"
        hook.write_text(PROTECTION_HOOK.format(base=self.base, option=option))
        hook.chmod(0o755)

    # reading back what landed -------------------------------------------------

    def head(self, ref: str | None = None) -> str:
        return git(self.path, "rev-parse", f"refs/heads/{ref or self.base}").strip()

    def refs(self) -> dict[str, str]:
        out = git(self.path, "for-each-ref", "--format=%(refname) %(objectname)")
        return dict(line.split(" ", 1) for line in out.splitlines())  # type: ignore[misc]

    def heads(self) -> dict[str, str]:
        """Branch name -> sha of every branch on the origin."""
        prefix = "refs/heads/"
        return {
            ref.removeprefix(prefix): sha
            for ref, sha in self.refs().items()
            if ref.startswith(prefix)
        }

    def log(self) -> list[tuple[str, str, list[str]]]:
        """(sha, message, parents) of every commit on the base, newest first."""
        out = git(self.path, "log", "--format=%H%x1f%P%x1f%B%x1e", self.base)
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
        return git(self.path, "show", f"{self.base}:docs/roadmap.md")

    def files(self, ref: str | None = None) -> list[str]:
        out = git(self.path, "ls-tree", "-r", "--name-only", ref or self.base)
        return out.split()
