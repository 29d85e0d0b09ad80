"""A retry's fresh start on origin: keep the task branch's work aside, then put
the branch back on the base's tip, with one empty "start over" commit on top.

The empty commit matters on GitHub: a pull request whose head is force-pushed
to a commit with nothing ahead of its base is closed by GitHub itself and can
never be reopened (public reports: dimikot/git-grok#30, urbit/vere#723), so the
task's pull request would be lost. Two pushes, each safe to repeat: the kept
branch is created only when absent, and the task branch moves only with a
lease on the head that was kept.
"""

from __future__ import annotations

from app.core.git_identity import INTEGRATOR_EMAIL, INTEGRATOR_NAME, identity_env
from app.gitops.evidence.repo import REMOTE, LocalRepo, RepoError
from app.gitops.runner import NETWORK_TIMEOUT, GitError, git


def start_over(repo: LocalRepo, *, base: str, branch: str, keep: str) -> str | None:
    """Move `branch` on origin to a fresh start from `base`, its work kept on `keep`.

    Returns the branch's new head, or None when there was nothing to move (no
    such branch, or the work is already kept: a repeated call changes nothing).
    """
    heads = repo.origin_heads()
    head, tip = heads.get(branch), heads.get(base)
    if head is None or keep in heads:
        return None
    if tip is None:
        raise RepoError(f"{base} is not on {REMOTE}")
    try:
        repo.fetch(base, branch)
        env = {**repo.env, **identity_env(INTEGRATOR_NAME, INTEGRATOR_EMAIL)}
        message = f"Start {branch} over from {base} (the earlier work is kept on {keep})"
        fresh = git(
            repo.path, "commit-tree", f"{tip}^{{tree}}", "-p", tip, "-m", message, env=env
        ).stdout.strip()
        push = ("push", "--quiet", "--no-verify", repo.origin_url)
        git(repo.path, *push, f"{head}:refs/heads/{keep}", timeout=NETWORK_TIMEOUT, env=repo.env)
        git(
            repo.path, *push, f"--force-with-lease=refs/heads/{branch}:{head}",
            f"{fresh}:refs/heads/{branch}", timeout=NETWORK_TIMEOUT, env=repo.env,
        )  # fmt: skip
    except GitError as exc:
        raise RepoError(f"cannot start {branch} over from {base}: {exc}") from None
    return fresh
