"""The runner's git: evidence before and after the agent, commit and push.

Every call goes through `app.gitops.runner` (deadlines, process-group kills,
hooks off, a configuration the agent cannot steer). The push sends exactly one
refspec to the URL read before the agent ran, authenticates only through an
askpass program given to that one git call, and is checked on the remote
afterwards, so a redirected push is never reported as pushed.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path

from app.core.identity import Identity
from app.gitops.auth import auth_env
from app.gitops.runner import NETWORK_TIMEOUT, GitError, GitRunner, git


class PushNotLanded(GitError):
    """The push reported success but the remote does not show the commit on the branch."""


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
    """The remote's URL as configured, before any insteadOf rewriting."""
    proc = git(workdir, "config", "--get", f"remote.{remote}.url", check=False)
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


def push(workdir: Path, url: str, branch: str, *, token: str | None = None) -> str:
    """Push HEAD to `branch` at `url` and nowhere else (never forced); returns the sha.

    `token`, when given, reaches git only through an askpass program in a private
    temporary directory, for this call and the check after it. Raises GitError
    when git fails and PushNotLanded when the remote does not show the commit.
    """
    sha = head(workdir)
    ref = f"refs/heads/{branch}"
    with tempfile.TemporaryDirectory(prefix="odw-push-") as tmp:
        runner = GitRunner(
            timeout=NETWORK_TIMEOUT, env=auth_env(Path(tmp), token), secrets=[token or ""]
        )
        runner.run(
            "push", "--no-verify", "--porcelain", "--no-follow-tags", "--recurse-submodules=no",
            url, f"HEAD:{ref}", cwd=workdir,
        )  # fmt: skip
        listed = runner.run("ls-remote", url, ref, cwd=workdir).stdout.split()
    found = listed[0] if listed else None
    if sha is None or found != sha:
        raise PushNotLanded(
            ("push", url, ref),
            1,
            f"the push reported success but {url} shows {found or 'no'} {ref}, not {sha}",
        )
    return sha


def file_in_commit(workdir: Path, rev: str, path: str, limit: int) -> str | None:
    """The committed text of `path` at `rev`, or None when absent or over `limit` bytes."""
    size = git(workdir, "cat-file", "-s", f"{rev}:{path}", check=False)
    if size.returncode != 0 or int(size.stdout.strip() or limit + 1) > limit:
        return None
    return git(workdir, "cat-file", "blob", f"{rev}:{path}").stdout
