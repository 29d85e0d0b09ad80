"""Ticking a task merged by a person: the roadmap box on the base, nothing else.

When a person merges a task's pull request, the task landed without ODW's
squash, so nothing ticked its box. The tick's attempt (`TickAttempt`) in
`LandingJob.land`'s loop, under the base's merge lock in the kept worktree the
integrator uses: fetch the base; stop if the box is ticked already; tick it
(`app.core.roadmap_edit.tick`, the integrator's own edit); commit it under the
given identity, naming the pull request; push it to the base (never forced).
A non-fast-forward rejection goes round from a fresh fetch; a push refused by
branch protection is reported with `PROTECTED_BASE` in the summary, and
nothing else is tried.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from app.core.roadmap_edit import TickError, is_ticked, tick
from app.gitops.integrate import PROTECTED_BASE, refused_by_protection
from app.gitops.landed import RUN_TRAILER
from app.gitops.landing_job import (
    DEFAULT_LOCK_TIMEOUT,
    DEFAULT_MAX_ATTEMPTS,
    DEFAULT_ROADMAP,
    Again,
    Landing,
    LandingJob,
    Steps,
    Stop,
)
from app.gitops.push import PushStatus, push_head

if TYPE_CHECKING:
    from app.core.identity import Identity
    from app.gitops.lock import MergeLock


@dataclass(frozen=True)
class TickReport:
    ticked: bool  # the box is ticked on the base now (by this call or before it)
    sha: str | None  # the tick commit pushed, None when nothing was pushed
    summary: str


def tick_on_base(
    repo: str,
    base: str,
    branch: str,
    task_id: str,
    *,
    note: str,
    run_id: str,
    lock: MergeLock,
    data_dir: Path,
    roadmap_path: str = DEFAULT_ROADMAP,
    token: str | None = None,
    identity: Identity | None = None,
    max_attempts: int = DEFAULT_MAX_ATTEMPTS,
    lock_timeout: float = DEFAULT_LOCK_TIMEOUT,
) -> TickReport:
    """Tick `task_id` in the roadmap on `base`; `note` (why it is done) goes in the
    commit body. Raises IntegrationInputError for arguments that cannot be right."""
    landing = Landing(
        repo, base, branch, task_id, run_id=run_id, data_dir=data_dir,
        roadmap_path=roadmap_path, max_attempts=max_attempts, token=token, identity=identity,
    )  # fmt: skip
    return LandingJob(landing).land(TickAttempt(note), lock, lock_timeout)


@dataclass(frozen=True)
class TickAttempt:
    """The tick's attempt: the fetched base with the box ticked, pushed unforced."""

    note: str  # why the task is done, for the commit body

    def refresh(self, job: LandingJob) -> TickReport | None:
        job.mirror.fetch([job.base])  # the task branch may be gone: the base alone
        return None

    def prepare(self, job: LandingJob, wt: Path, steps: Steps) -> None:
        job.git(wt, "switch", "--quiet", "--discard-changes", "--detach", job.origin_base)

    def attempt(self, job: LandingJob, wt: Path, steps: Steps) -> TickReport:
        path = wt / job.roadmap_path
        try:
            text = path.read_bytes().decode("utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise Stop(f"cannot read {job.roadmap_path} on {job.base}: {exc}") from None
        if is_ticked(text, job.task_id):
            return TickReport(True, None, f"{job.task_id} is ticked on {job.base}")
        try:
            edited = tick(text, job.task_id)
        except TickError as exc:
            raise Stop(f"cannot tick {job.task_id}: {exc}") from None
        path.write_bytes(edited.encode("utf-8"))
        job.git(
            wt, "commit", "--quiet", "--no-verify", "-F", "-", "--", job.roadmap_path,
            input=self._message(job),
        )  # fmt: skip
        job.attempts += 1
        outcome = push_head(job.runner, wt, job.base)
        if outcome.status is PushStatus.PUSHED:
            sha = job.git(wt, "rev-parse", "HEAD").strip()
            return TickReport(True, sha, f"ticked {job.task_id} on {job.base}")
        if outcome.status is PushStatus.REFUSED:
            why = (
                PROTECTED_BASE
                if refused_by_protection(outcome.message)
                else "rejected by the remote"
            )
            raise Stop(f"push to {job.base} {why}: {outcome.message}")
        if outcome.status is PushStatus.FAILED:
            raise Stop(f"push failed: {outcome.message}")
        raise Again(f"{job.attempts} push(es) rejected as non-fast-forward; try again")

    def failed(
        self, job: LandingJob, steps: Steps, summary: str, conflicts: str | None
    ) -> TickReport:
        return TickReport(False, None, summary)

    def _message(self, job: LandingJob) -> str:
        return (
            f"Mark {job.task_id} done in {job.roadmap_path}\n\n{self.note}\n\n"
            f"{RUN_TRAILER}: {job.run_id}\n"
        )
