"""Landing through the task's pull request, for bases protected against pushes.

The pull-request method's attempt (`PullRequestAttempt`) in `LandingJob.land`'s
loop, after the push method's own fetch, landed check, rebase and tick: push
the branch with `--force-with-lease` against the head ODW fetched (the task's
own branch when its pull request is ready for review, else an `integrate-<id>`
branch and pull request, as a draft cannot be made ready through REST); wait
for the required checks of that head; then squash-merge the pull request with
`sha` = that head and the push method's commit title and trailers. A merge
refused as it stands (GitHub's 405 not mergeable, 409 head changed) goes round
from a fresh fetch and rebase. A merge whose answer is lost (a 500, a timeout)
is never sent again before the pull request and the base are re-read: GitHub
may have merged it. The report has the push method's five fields. The forge is
reached only through the narrow `PullRequestPort` (`app.gitops.pull_port`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from app.core.integration import IntegrationReport
from app.core.naming import integration_branch
from app.core.sanitize import sanitize_line
from app.gitops.landing_job import Again, LandingJob, Steps, Stop, TaskAttempt
from app.gitops.pr_checks import ChecksWake, wait_for_checks
from app.gitops.pull_port import (
    ForgeFailed,
    MergeAnswerLost,
    MergeRefused,
    PullRequestPort,
    PullView,
)
from app.gitops.refusals import refusal_of, what_to_do

DEFAULT_CHECKS_TIMEOUT = 3600.0
ODW_CHECKS = "ODW · "
DEFAULT_POLL = 30.0


@dataclass
class PullRequestAttempt(TaskAttempt):
    """The pull-request method's attempt: push, open, wait for checks, merge.

    One per landing: it remembers the landing's pull request between rounds.
    """

    port: PullRequestPort
    wake: ChecksWake | None = None
    checks_timeout: float = DEFAULT_CHECKS_TIMEOUT
    poll: float = DEFAULT_POLL
    number: int | None = None
    head_branch: str = ""  # the branch of the pull request merged

    def attempt(self, job: LandingJob, wt: Path, steps: Steps) -> IntegrationReport:
        try:
            pull = self._choose_pull(job)
            head = self._push_branch(job, wt)
            pull = pull or self._open_pull(job)
            self._wait_for_checks(job, head)
            job.attempts += 1
            sha = self._merge(job, pull, head)
        except Again as again:
            which = "its pull request" if self.number is None else f"pull request #{self.number}"
            raise Again(
                f"{job.attempts} merge attempt(s) of {which} refused ({again}); run it again"
            ) from None
        except ForgeFailed as exc:
            raise Stop(f"GitHub failed: {exc}") from None
        steps.squashed = True
        steps.sha = sha
        side = self.head_branch != job.branch  # through `integrate-<id>`, not the task branch
        job.fetched_head = self._seen(job, wt, job.branch) if side else head
        report = job.report(
            steps,
            pushed=True,
            summary=f"landed {job.task_id} on {job.base} as {sha} through "
            f"pull request #{pull.number} after {job.attempts} merge attempt(s)",
        )
        if side:
            self._delete(job, wt, self.head_branch, head)
        return job.delete_task_branch(wt, report)

    def _choose_pull(self, job: LandingJob) -> PullView | None:
        """The task's own pull request when it is ready for review; otherwise (none,
        or a draft, which the REST API cannot make ready) an `integrate-<id>` branch
        and its pull request carry the landing, and the task branch is left alone."""
        pull = self.port.find_pull(job.branch, job.base)
        if pull is not None and pull.state == "open" and not pull.draft:
            self.head_branch, self.number = job.branch, pull.number
            return pull
        self.head_branch = integration_branch(job.task_id)
        return None

    @staticmethod
    def _seen(job: LandingJob, wt: Path, branch: str) -> str:
        """The branch's head on origin as ODW last read it ("" when it does not exist)."""
        if branch == job.branch:
            return job.git(wt, "rev-parse", f"refs/remotes/origin/{branch}").strip()
        out = job.git(wt, "ls-remote", "origin", f"refs/heads/{branch}")
        return out.split()[0] if out.split() else ""

    def _push_branch(self, job: LandingJob, wt: Path) -> str:
        """Push the rebased, ticked head to the pull request's branch, leased on the
        head ODW saw there; the head pushed."""
        branch = self.head_branch
        head = job.git(wt, "rev-parse", "HEAD").strip()
        seen = self._seen(job, wt, branch)
        if head == seen:
            return head
        result = job.runner.run(
            "push", "--porcelain", "--no-verify", "origin",
            f"--force-with-lease=refs/heads/{branch}:{seen}",
            f"HEAD:refs/heads/{branch}", cwd=wt, check=False,
        )  # fmt: skip
        if result.returncode != 0:
            said = (result.stdout + result.stderr).strip()
            refusal = refusal_of(said)
            if refusal is not None:  # GitHub's decision, the same on every round
                rejected = [ln for ln in said.splitlines() if "[remote rejected]" in ln]
                raise Stop(
                    f"push of the rebased {branch} refused by GitHub ({refusal.value}: "
                    f"{' '.join(rejected[:1] or said.splitlines()[-1:]).strip()}); "
                    f"not retried: {what_to_do(refusal, branch, task_branch=True)}"
                )
            if "stale info" in said or "rejected" in said:
                raise Again(f"{branch} moved since it was fetched")
            raise Stop(f"push of the rebased {branch} failed: {said.splitlines()[-1:]}")
        return head

    @staticmethod
    def _delete(job: LandingJob, wt: Path, branch: str, head: str) -> None:
        job.runner.run(
            "push", "--porcelain", "--no-verify", "origin",
            f"--force-with-lease=refs/heads/{branch}:{head}", f":refs/heads/{branch}",
            cwd=wt, check=False,
        )  # fmt: skip

    def _open_pull(self, job: LandingJob) -> PullView:
        pull = self.port.find_pull(self.head_branch, job.base)
        if pull is None or pull.state != "open":
            subject = job.message().partition("\n\n")[0]
            pull = self.port.create_pull(
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

    def _wait_for_checks(self, job: LandingJob, head: str) -> None:
        port = self.port

        def states(sha: str) -> dict[str, str]:
            # ODW's own check runs describe the task, not the head's fitness to merge.
            found = port.check_states(sha)
            return {k: v for k, v in found.items() if not k.startswith(ODW_CHECKS)}

        verdict = wait_for_checks(
            states,
            port.required_contexts(job.base),
            head,
            timeout=self.checks_timeout,
            poll=self.poll,
            wake=self.wake,
        )
        if not verdict.passed:
            raise Stop(
                f"{verdict.detail}; pull request #{self.number} was not merged. Fix it on "
                f"{job.branch}, then `/odw retry {job.task_id}`"
            )

    def _merge(self, job: LandingJob, pull: PullView, head: str) -> str:
        """Squash-merge exactly `head`, the merge's sha; a lost answer is settled by
        re-reading first."""
        subject, _, body = job.message().partition("\n\n")
        try:
            result = self.port.merge_pull(pull.number, head, title=subject, message=body)
        except MergeRefused as exc:
            raise Again(str(exc)) from None
        except MergeAnswerLost as exc:
            # GitHub may have merged. Re-read the pull request (and, through Again,
            # the base) before anything is sent again.
            again = self.port.get_pull(pull.number)
            if again.merged and again.merge_commit_sha:
                return again.merge_commit_sha
            raise Again(f"merge answer lost ({exc}); not merged on re-read") from None
        if not result.merged:
            raise Again(result.message or "not merged")
        return result.sha
