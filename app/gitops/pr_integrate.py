"""Landing through the task's pull request, for bases protected against pushes.

Under the base's merge lock, in its kept worktree of the mirror: fetch; stop
early if the task already landed; rebase the task branch onto the base and
tick its roadmap box on the branch (the push method's own steps); push the
branch with `--force-with-lease` against the head ODW fetched (the task's own
branch when its pull request is ready for review, else an `integrate-<id>`
branch and pull request, as a draft cannot be made ready through REST); wait
for the required checks of that head; then squash-merge the pull request with
`sha` = that head and the push method's commit title and trailers. 405 (not
mergeable: base moved, checks missing) and 409 (head changed) go back to a
fresh fetch and rebase (the push method's loop, `_Integration.land`). A
merge whose answer is lost (a 500, a timeout) is never sent again before the
pull request and the base are re-read: GitHub may have merged it. The report
has the push method's five fields.

`Lander` picks the method per repository: `integration: pull-request`, or
the push method until branch protection refuses a push (said once), then
pull requests for that base from then on.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from app.core.integration import IntegrationReport
from app.core.naming import integration_branch
from app.core.sanitize import sanitize_line
from app.github.errors import GitHubError, HeadMoved, NotMergeable
from app.github.protocols import CheckStates, MergeResult, Protection, PullRequest, Pulls
from app.gitops.integrate import (
    DEFAULT_LOCK_TIMEOUT,
    DEFAULT_ROADMAP,
    PROTECTED_BASE,
    Landing,
    _Again,
    _Integration,
    _Steps,
    _Stop,
    land,
    prepare,
    under_lock,
)
from app.gitops.lock import MergeLock
from app.gitops.pr_checks import ChecksWake, wait_for_checks

DEFAULT_CHECKS_TIMEOUT = 3600.0
ODW_CHECKS = "ODW · "
DEFAULT_POLL = 30.0


@dataclass(frozen=True)
class PullSide:
    """The GitHub ports landing through a pull request needs."""

    pulls: Pulls
    checks: CheckStates
    protection: Protection | None = None
    wake: ChecksWake | None = None
    checks_timeout: float = DEFAULT_CHECKS_TIMEOUT
    poll: float = DEFAULT_POLL


def integrate_via_pull(
    landing: Landing,
    *,
    lock: MergeLock,
    github: PullSide,
    lock_timeout: float = DEFAULT_LOCK_TIMEOUT,
) -> IntegrationReport:
    """Land `landing.branch` on `landing.base` by squash-merging its pull request.

    Same arguments and report as `integrate`, plus the GitHub ports; raises
    IntegrationInputError for arguments that cannot be right.
    """
    job = prepare(landing)
    return under_lock(job, lock, lock_timeout, _PullLanding(job, github).run)


@dataclass
class _PullLanding:
    job: _Integration
    github: PullSide
    number: int | None = None
    head_branch: str = ""  # the branch of the pull request merged

    def run(self) -> IntegrationReport:
        return self.job.land(self._attempt)

    def _attempt(self, wt: Path, steps: _Steps) -> IntegrationReport:
        """The pull-request method's attempt: push, open, wait for checks, merge."""
        job = self.job
        try:
            pull = self._choose_pull()
            head = self._push_branch(wt)
            pull = pull or self._open_pull()
            self._wait_for_checks(head)
            job.attempts += 1
            result = self._merge(pull, head)
        except _Again as again:
            which = "its pull request" if self.number is None else f"pull request #{self.number}"
            raise _Again(
                f"{job.attempts} merge attempt(s) of {which} refused ({again}); run it again"
            ) from None
        except GitHubError as exc:
            raise _Stop(f"GitHub failed: {exc}") from None
        steps.squashed = True
        steps.sha = result.sha
        job.fetched_head = self._seen(wt, job.branch) if self._side else head
        report = job._report(
            steps,
            pushed=True,
            summary=f"landed {job.task_id} on {job.base} as {result.sha} through "
            f"pull request #{pull.number} after {job.attempts} merge attempt(s)",
        )
        if self._side:
            self._delete(wt, self.head_branch, head)
        return job._delete_task_branch(wt, report)

    @property
    def _side(self) -> bool:
        """Landing through `integrate-<id>`, not the task branch itself."""
        return self.head_branch != self.job.branch

    def _choose_pull(self) -> PullRequest | None:
        """The task's own pull request when it is ready for review; otherwise (none,
        or a draft, which the REST API cannot make ready) an `integrate-<id>` branch
        and its pull request carry the landing, and the task branch is left alone."""
        job = self.job
        pull = self.github.pulls.find_pull(job.branch, job.base)
        if pull is not None and pull.state == "open" and not pull.draft:
            self.head_branch, self.number = job.branch, pull.number
            return pull
        self.head_branch = integration_branch(job.task_id)
        return None

    def _seen(self, wt: Path, branch: str) -> str:
        """The branch's head on origin as ODW last read it ("" when it does not exist)."""
        if branch == self.job.branch:
            return self.job._git(wt, "rev-parse", f"refs/remotes/origin/{branch}").strip()
        out = self.job._git(wt, "ls-remote", "origin", f"refs/heads/{branch}")
        return out.split()[0] if out.split() else ""

    def _push_branch(self, wt: Path) -> str:
        """Push the rebased, ticked head to the pull request's branch, leased on the
        head ODW saw there; the head pushed."""
        job = self.job
        branch = self.head_branch
        head = job._git(wt, "rev-parse", "HEAD").strip()
        seen = self._seen(wt, branch)
        if head == seen:
            return head
        result = job.runner.run(
            "push", "--porcelain", "--no-verify", "origin",
            f"--force-with-lease=refs/heads/{branch}:{seen}",
            f"HEAD:refs/heads/{branch}", cwd=wt, check=False,
        )  # fmt: skip
        if result.returncode != 0:
            said = (result.stdout + result.stderr).strip()
            if "stale info" in said or "rejected" in said:
                raise _Again(f"{branch} moved since it was fetched")
            raise _Stop(f"push of the rebased {branch} failed: {said.splitlines()[-1:]}")
        return head

    def _delete(self, wt: Path, branch: str, head: str) -> None:
        self.job.runner.run(
            "push", "--porcelain", "--no-verify", "origin",
            f"--force-with-lease=refs/heads/{branch}:{head}", f":refs/heads/{branch}",
            cwd=wt, check=False,
        )  # fmt: skip

    def _open_pull(self) -> PullRequest:
        job = self.job
        pulls = self.github.pulls
        pull = pulls.find_pull(self.head_branch, job.base)
        if pull is None or pull.state != "open":
            subject = job._message().partition("\n\n")[0]
            pull = pulls.create_pull(
                self.head_branch,
                job.base,
                # The roadmap's headline: a title that mentions and references nothing.
                sanitize_line(subject),
                f"Lands roadmap task {job.task_id} (`{job.branch}`, rebased and ticked); "
                "opened by ODW because the base takes changes only through pull requests.",
                draft=False,
            )
        self.number = pull.number
        return pull

    def _wait_for_checks(self, head: str) -> None:
        gh = self.github

        def states(sha: str) -> dict[str, str]:
            # ODW's own check runs describe the task, not the head's fitness to merge.
            found = gh.checks.check_states(sha)
            return {k: v for k, v in found.items() if not k.startswith(ODW_CHECKS)}

        required = gh.protection.required_contexts(self.job.base) if gh.protection else None
        verdict = wait_for_checks(
            states, required, head, timeout=gh.checks_timeout, poll=gh.poll, wake=gh.wake
        )
        if not verdict.passed:
            raise _Stop(
                f"{verdict.detail}; pull request #{self.number} was not merged. Fix it on "
                f"{self.job.branch}, then `/odw retry {self.job.task_id}`"
            )

    def _merge(self, pull: PullRequest, head: str) -> MergeResult:
        """Squash-merge exactly `head`; a lost answer is settled by re-reading first."""
        subject, _, body = self.job._message().partition("\n\n")
        try:
            result = self.github.pulls.merge_pull(pull.number, head, title=subject, message=body)
        except (NotMergeable, HeadMoved) as exc:
            raise _Again(f"{exc.status} {exc.reason}") from None
        except GitHubError as exc:
            if exc.status and exc.status < 500:
                raise
            # The answer was lost: GitHub may have merged. Re-read the pull request
            # (and, through _Again, the base) before anything is sent again.
            again = self.github.pulls.get_pull(pull.number)
            if again.merged and again.merge_commit_sha:
                return MergeResult(again.merge_commit_sha, True, "merged (found on re-read)")
            raise _Again(f"merge answer lost ({exc}); not merged on re-read") from None
        if not result.merged:
            raise _Again(result.message or "not merged")
        return result


@dataclass
class Lander:
    """Chooses how tasks land per (repository, base) and remembers protection.

    With `integration: pull-request` every landing goes through the pull
    request; otherwise the push method runs until branch protection refuses a
    push, which is said once (`notices`) and switches that base to pull requests.
    """

    lock: MergeLock
    data_dir: Path
    pull_side: Callable[[str], PullSide]  # repository -> its GitHub ports
    notices: list[str] = field(default_factory=list)
    _protected: set[tuple[str, str]] = field(default_factory=set)
    _guard: threading.Lock = field(default_factory=threading.Lock)

    def land(
        self,
        repo: str,
        full_name: str,
        base: str,
        branch: str,
        task_id: str,
        *,
        run_id: str,
        method: str = "push",
        token: str | None = None,
        title: str | None = None,
        roadmap_path: str = DEFAULT_ROADMAP,
        delete_branch: bool = True,
        push_options: Sequence[str] = (),
    ) -> IntegrationReport:
        key = (full_name, base)
        with self._guard:
            through_pull = method == "pull-request" or key in self._protected
        landing = Landing(
            repo, base, branch, task_id, run_id=run_id, data_dir=self.data_dir, token=token,
            title=title, roadmap_path=roadmap_path, delete_branch=delete_branch,
        )  # fmt: skip
        if not through_pull:
            report = land(landing.replace(push_options=push_options), self.lock)
            if report.ok or PROTECTED_BASE not in (report.summary or ""):
                return report
            with self._guard:
                first = key not in self._protected
                self._protected.add(key)
            if first:
                self.notices.append(
                    f"Branch protection refused a push to `{base}`; ODW lands tasks through "
                    "their pull requests from now on (squash merge once required checks pass)."
                )
        return integrate_via_pull(landing, lock=self.lock, github=self.pull_side(full_name))
