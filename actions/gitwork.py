"""The runner's git: evidence before and after the agent, commit and push.

Every call has a timeout (seed 004: 30 s for internal git calls; network
operations get longer). Hooks are switched off for the runner's own commits and
pushes, because the agent could have planted them in `.git/hooks`.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

GIT_TIMEOUT = 30.0
NETWORK_TIMEOUT = 300.0
_SAFE = ("-c", "core.hooksPath=/dev/null", "-c", "commit.gpgsign=false", "-c", "core.quotePath=off")


class GitError(Exception):
    """A git command failed or timed out; the message holds its stderr."""


@dataclass(frozen=True)
class Identity:
    """The machine identity the runner commits under (author and committer)."""

    name: str = "odw-runner"
    email: str = "odw-runner@users.noreply.github.com"

    def env(self) -> dict[str, str]:
        return {
            "GIT_AUTHOR_NAME": self.name,
            "GIT_AUTHOR_EMAIL": self.email,
            "GIT_COMMITTER_NAME": self.name,
            "GIT_COMMITTER_EMAIL": self.email,
        }


DEFAULT_IDENTITY = Identity()


def git(
    workdir: Path,
    *args: str,
    timeout: float = GIT_TIMEOUT,
    env: dict[str, str] | None = None,
    check: bool = True,
) -> subprocess.CompletedProcess[str]:
    full_env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C", **(env or {})}
    try:
        proc = subprocess.run(
            ["git", *_SAFE, *args],
            cwd=workdir,
            env=full_env,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise GitError(f"git {args[0]} timed out after {timeout:.0f}s") from None
    except OSError as exc:
        raise GitError(f"git {args[0]}: {exc.strerror or exc}") from None
    if check and proc.returncode != 0:
        detail = (proc.stderr or proc.stdout).strip().splitlines()
        raise GitError(f"git {args[0]} failed: {detail[-1] if detail else proc.returncode}")
    return proc


def toplevel(workdir: Path) -> Path | None:
    proc = git(workdir, "rev-parse", "--show-toplevel", check=False)
    return Path(proc.stdout.strip()) if proc.returncode == 0 else None


def head(workdir: Path) -> str | None:
    proc = git(workdir, "rev-parse", "--verify", "-q", "HEAD", check=False)
    return proc.stdout.strip() or None if proc.returncode == 0 else None


def current_branch(workdir: Path) -> str | None:
    proc = git(workdir, "symbolic-ref", "-q", "--short", "HEAD", check=False)
    return proc.stdout.strip() or None if proc.returncode == 0 else None


def remote_url(workdir: Path, remote: str) -> str | None:
    proc = git(workdir, "remote", "get-url", remote, check=False)
    return proc.stdout.strip() or None if proc.returncode == 0 else None


@dataclass(frozen=True)
class StatusEntry:
    """One line of `git status`: two status letters and the path (the new one for renames)."""

    code: str
    path: str

    @property
    def deleted(self) -> bool:
        return "D" in self.code


def status(workdir: Path) -> list[StatusEntry]:
    out = git(workdir, "status", "--porcelain=v1", "-z", "--untracked-files=all").stdout
    parts = out.split("\0")
    entries: list[StatusEntry] = []
    i = 0
    while i < len(parts):
        item = parts[i]
        i += 1
        if len(item) < 4:
            continue
        code, path = item[:2], item[3:]
        if code[0] in "RC":
            i += 1  # the rename's source path follows
        entries.append(StatusEntry(code, path))
    return entries


def commits_between(workdir: Path, before: str | None, after: str | None) -> list[str]:
    if after is None or before == after:
        return []
    spec = [after] if before is None else [f"{before}..{after}"]
    proc = git(workdir, "rev-list", "--reverse", *spec, check=False)
    return proc.stdout.split() if proc.returncode == 0 else []


def commit_all(workdir: Path, identity: Identity, message: str) -> str | None:
    """Commit everything the agent left (respecting .gitignore); None if nothing was left."""
    git(workdir, "add", "-A")
    if git(workdir, "diff", "--cached", "--quiet", check=False).returncode == 0:
        return None
    git(workdir, "commit", "--no-verify", "-q", "-m", message, env=identity.env())
    return head(workdir)


def push(workdir: Path, url: str, branch: str) -> None:
    """Push HEAD to `branch` at `url` and nowhere else; never forced."""
    git(
        workdir,
        "push",
        "--no-verify",
        "--porcelain",
        url,
        f"HEAD:refs/heads/{branch}",
        timeout=NETWORK_TIMEOUT,
    )


def path_in_commit(workdir: Path, rev: str, path: str) -> bool:
    proc = git(workdir, "cat-file", "-e", f"{rev}:{path}", check=False)
    return proc.returncode == 0
