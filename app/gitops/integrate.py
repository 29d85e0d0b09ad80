"""Landing a task by pushing one squash commit to its base.

The push method's attempt (`PushAttempt`) in `LandingJob.land`'s loop: on the
task branch rebased onto `origin/<base>` with its box ticked, make one squash
commit with `ODW-Task`/`ODW-Run` trailers and push it to the base. A
non-fast-forward rejection goes round from a fresh fetch, up to `max_attempts`
pushes; anything else stops with the reason. The push is the only write to
the base, so a crash at any point leaves the base without the task or with
exactly one commit for it. Once landed, the task branch is deleted on origin
(leased on the head that was landed) unless the caller keeps it.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from app.core.integration import IntegrationReport
from app.gitops.landing_job import (
    DEFAULT_LOCK_TIMEOUT,
    DEFAULT_MAX_ATTEMPTS,
    DEFAULT_ROADMAP,
    Again,
    Landing,
    LandingJob,
    Steps,
    Stop,
    TaskAttempt,
)
from app.gitops.push import PushStatus, push_head
from app.gitops.refusals import Refusal, refusal_of, what_to_do
from app.gitops.runner import DEFAULT_TIMEOUT

TYPE_CHECKING = False
if TYPE_CHECKING:
    from app.core.identity import Identity  # the pydantic model; never built here
    from app.gitops.lock import MergeLock

# The words a push refused by branch protection reports (GitHub's GH006, or a
# ruleset's GH013 asking for a pull request); the host then lands through the
# task's pull request.
PROTECTED_BASE = "refused by branch protection"


def refused_by_protection(message: str) -> bool:
    return refusal_of(message) is Refusal.PROTECTED


def integrate(
    repo: str,
    base: str,
    branch: str,
    task_id: str,
    *,
    run_id: str,
    lock: MergeLock,
    data_dir: Path,
    roadmap_path: str = DEFAULT_ROADMAP,
    max_attempts: int = DEFAULT_MAX_ATTEMPTS,
    title: str | None = None,
    git_timeout: float = DEFAULT_TIMEOUT,
    lock_timeout: float = DEFAULT_LOCK_TIMEOUT,
    token: str | None = None,
    push_options: Sequence[str] = (),
    identity: Identity | None = None,
    delete_branch: bool = True,
) -> IntegrationReport:
    """Land `branch` on `base` of `repo` as one squash commit for `task_id`.

    Raises IntegrationInputError for arguments that cannot be right; every other
    outcome, including failures, is an IntegrationReport. Safe to call from many
    threads and processes at once when they share `lock` (or its backing store)
    and `data_dir`. With `delete_branch` the task branch is deleted on origin
    once the task has landed, unless it moved since it was fetched. Commits are
    made as `identity`, by default the integrator's own (`INTEGRATOR_IDENTITY`).
    """
    landing = Landing(
        repo, base, branch, task_id, run_id=run_id, data_dir=data_dir,
        roadmap_path=roadmap_path, max_attempts=max_attempts, title=title,
        git_timeout=git_timeout, token=token, push_options=push_options,
        identity=identity, delete_branch=delete_branch,
    )  # fmt: skip
    return land(landing, lock, lock_timeout)


def land(
    landing: Landing, lock: MergeLock, lock_timeout: float = DEFAULT_LOCK_TIMEOUT
) -> IntegrationReport:
    """`integrate` for a `Landing` already put together."""
    return LandingJob(landing).land(PushAttempt(), lock, lock_timeout)


class PushAttempt(TaskAttempt):
    """The push method's attempt: squash, push to the base."""

    def attempt(self, job: LandingJob, wt: Path, steps: Steps) -> IntegrationReport:
        self._squash(job, wt, steps)
        job.attempts += 1
        base = job.base
        outcome = push_head(job.runner, wt, base, job.push_options, source=steps.sha or "HEAD")
        if outcome.status is PushStatus.PUSHED:
            return job.delete_task_branch(wt, job.report(steps, pushed=True))
        if outcome.status is PushStatus.REFUSED:
            refusal = refusal_of(outcome.message)
            if refusal is Refusal.PROTECTED:
                raise Stop(
                    f"push to {base} {PROTECTED_BASE} ({outcome.message}); "
                    f"not retried: {what_to_do(refusal, base)}"
                )
            if refusal is not None:
                raise Stop(
                    f"push to {base} refused by GitHub ({refusal.value}: {outcome.message}); "
                    f"not retried: {what_to_do(refusal, base)}"
                )
            raise Stop(
                f"push to {base} rejected by the remote ({outcome.message}); "
                "not retried: allow ODW to push to the base, or land it by hand"
            )
        if outcome.status is PushStatus.FAILED:
            raise Stop(
                f"push to {base} failed: {outcome.message}; inspect origin/"
                f"{base} before retrying (a rerun detects a landed task)"
            )
        raise Again(
            f"{job.attempts} push(es) rejected as non-fast-forward; run the integration again"
        )

    @staticmethod
    def _squash(job: LandingJob, wt: Path, steps: Steps) -> None:
        # The squash is one commit on the base with exactly the tree of the rebased,
        # ticked head: made from that tree by name, so it cannot differ from it, and
        # made without moving HEAD or touching the index (one git call, not three).
        sha = job.git(
            wt, "commit-tree", "HEAD^{tree}", "-p", job.origin_base, "-F", "-",
            input=job.message(),
        ).strip()  # fmt: skip
        if job.delete_branch:  # the head that was fetched and squashed: the deletion's lease
            job.fetched_head = job.git(wt, "rev-parse", f"refs/remotes/origin/{job.branch}").strip()
        steps.squashed = True
        steps.sha = sha
