"""Local mode's auth preflight: can this clone's credentials for origin read
the base and push task branches? Asked of origin itself, before anything runs.

Reading is `ls-remote` of the base. Pushing is `git push --dry-run` of the
base's commit to a task-branch name: over HTTP(S) and SSH that opens
receive-pack, which the server authorises (GitHub answers 403 to a token
without `contents: write`) and writes nothing. For a path origin, git's own
receive-pack runs as this user, so the directory's write access is checked.
"""

from __future__ import annotations

import os
from pathlib import Path

from app.core.preflight import Missing, Preflight
from app.gitops.evidence.repo import LocalRepo
from app.gitops.runner import NETWORK_TIMEOUT, git

PROBE_BRANCH = "roadmap-odw-preflight"  # never created: the push is a dry run


def _why(stderr: str) -> str:
    lines = [ln.strip() for ln in stderr.splitlines() if ln.strip()]
    return lines[-1][:300] if lines else "git gave no reason"


def check(repo: LocalRepo, base: str) -> Preflight:
    checked = ["read the base", "push task branches"]
    read = git(
        repo.path,
        "ls-remote",
        "--heads",
        repo.origin_url,
        f"refs/heads/{base}",
        timeout=NETWORK_TIMEOUT,
        env=repo.env,
        check=False,
    )
    sha = read.stdout.split()[0] if read.returncode == 0 and read.stdout.split() else ""
    if not sha:
        why = _why(read.stderr) if read.returncode else f"origin has no branch {base}"
        return Preflight(
            checked=checked,
            missing=[
                Missing(permission="contents", level="read", needed_for="read the base", detail=why)
            ],
        )
    push = git(
        repo.path,
        "push",
        "--dry-run",
        "--porcelain",
        "--no-follow-tags",
        repo.origin_url,
        f"{sha}:refs/heads/{PROBE_BRANCH}",
        timeout=NETWORK_TIMEOUT,
        env=repo.env,
        check=False,
    )
    detail = _why(push.stderr) if push.returncode else _unwritable(repo.origin_url)
    if detail:
        return Preflight(
            checked=checked,
            missing=[
                Missing(
                    permission="contents",
                    level="write",
                    needed_for="push task branches",
                    detail=detail,
                )
            ],
        )
    return Preflight(checked=checked)


def _unwritable(url: str) -> str:
    """For a path origin: why this user cannot write its refs and objects, if so."""
    if "://" in url or ":" in url.split("/", 1)[0]:
        return ""  # a network origin answered receive-pack: authorised
    root = Path(url)
    git_dir = root if (root / "objects").is_dir() else root / ".git"
    for part in ("refs/heads", "objects"):
        if not os.access(git_dir / part, os.W_OK | os.X_OK):
            return f"{git_dir / part} is not writable by this user"
    return ""
