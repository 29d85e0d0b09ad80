"""Ticking a task merged by a person: the roadmap box on the base, nothing else.

When a person merges a task's pull request, the task landed without ODW's
squash, so nothing ticked its box. Under the base's merge lock, in the kept
worktree the integrator uses: fetch the base; stop if the box is ticked
already; tick it (`app.core.roadmap_edit.tick`, the integrator's own edit);
commit it under the given identity, naming the pull request; push it to the
base (never forced). A non-fast-forward rejection repeats from a fresh fetch;
a push refused by branch protection is reported with `PROTECTED_BASE` in the
summary, and nothing else is tried.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from app.core.roadmap_edit import TickError, is_ticked, tick
from app.gitops.integrate import (
    DEFAULT_LOCK_TIMEOUT,
    DEFAULT_MAX_ATTEMPTS,
    DEFAULT_ROADMAP,
    PROTECTED_BASE,
    Landing,
    _abort_leftover_rebase,
    _Integration,
    prepare,
    refused_by_protection,
)
from app.gitops.landed import RUN_TRAILER
from app.gitops.lock import LockTimeout, MergeLock, lock_key
from app.gitops.mirror import MirrorBusy
from app.gitops.push import PushStatus, push_head
from app.gitops.runner import GitError

if TYPE_CHECKING:
    from app.core.identity import Identity


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
    job = prepare(
        Landing(
            repo, base, branch, task_id, run_id=run_id, data_dir=data_dir,
            roadmap_path=roadmap_path, max_attempts=max_attempts, token=token,
            identity=identity,
        )
    )  # fmt: skip
    try:
        with lock.hold(lock_key(job.mirror.remote, base), lock_timeout):
            return _Tick(job, note).run()
    except LockTimeout as exc:
        return TickReport(False, None, f"{exc}: {base} is busy; try again later")


@dataclass
class _Tick:
    job: _Integration
    note: str

    def run(self) -> TickReport:
        job = self.job
        try:
            job.mirror.fetch([job.base])  # the worktree starts from the fetched base
            with job.mirror.kept_worktree(job.base, job.origin_base) as wt:
                _abort_leftover_rebase(job.runner, wt)
                for attempt in range(job.max_attempts):
                    if attempt:
                        job.mirror.fetch([job.base])
                    job._git(
                        wt, "switch", "--quiet", "--discard-changes", "--detach", job.origin_base
                    )
                    path = wt / job.roadmap_path
                    text = path.read_bytes().decode("utf-8")
                    if is_ticked(text, job.task_id):
                        return TickReport(True, None, f"{job.task_id} is ticked on {job.base}")
                    path.write_bytes(tick(text, job.task_id).encode("utf-8"))
                    job._git(
                        wt, "commit", "--quiet", "--no-verify", "-F", "-", "--", job.roadmap_path,
                        input=self._message(),
                    )  # fmt: skip
                    outcome = push_head(job.runner, wt, job.base)
                    if outcome.status is PushStatus.PUSHED:
                        sha = job._git(wt, "rev-parse", "HEAD").strip()
                        return TickReport(True, sha, f"ticked {job.task_id} on {job.base}")
                    if outcome.status is PushStatus.REFUSED:
                        protected = refused_by_protection(outcome.message)
                        why = PROTECTED_BASE if protected else "rejected by the remote"
                        said = f"push to {job.base} {why}: {outcome.message}"
                        return TickReport(False, None, said)
                    if outcome.status is PushStatus.FAILED:
                        return TickReport(False, None, f"push failed: {outcome.message}")
                return TickReport(False, None, f"{job.base} kept moving; try again")
        except TickError as exc:
            return TickReport(False, None, f"cannot tick {job.task_id}: {exc}")
        except (GitError, MirrorBusy, OSError, UnicodeDecodeError) as exc:
            return TickReport(False, None, f"git failed: {exc}")

    def _message(self) -> str:
        job = self.job
        return (
            f"Mark {job.task_id} done in {job.roadmap_path}\n\n{self.note}\n\n"
            f"{RUN_TRAILER}: {job.run_id}\n"
        )
