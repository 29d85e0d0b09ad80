"""One landing's git work and its fetch-rebase-retry loop, whatever the method.

`LandingJob(landing).land(strategy, lock)` holds the merge lock of (repository,
base) and, in the base's kept worktree of the mirror: fetches and verifies
(`strategy.refresh`: stop early when there is nothing left to do); puts the
worktree at what is to land (`strategy.prepare`: for a task, its branch rebased
detached onto `origin/<base>` with its roadmap box ticked); tries the base
once (`strategy.attempt`). An attempt that raises `Again` (the base or the
branch moved) goes round from a fresh fetch, up to `max_attempts` rounds;
`Stop`, a git failure or an unusable mirror ends the landing with the
strategy's own report (`strategy.failed`). The strategies: squash and push
(`app.gitops.integrate`), squash-merge the task's pull request
(`app.gitops.pr_integrate`), tick a person-merged task's box (`app.gitops.tick`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path, PurePosixPath

from app.core.git_identity import INTEGRATOR_EMAIL, INTEGRATOR_NAME, identity_env
from app.core.integration import IntegrationReport
from app.core.naming import squash_subject
from app.core.roadmap_edit import TickError, is_ticked, tick
from app.core.roadmap_scan import task_headline
from app.core.values import Value
from app.gitops.auth import auth_env, check_url
from app.gitops.landed import RUN_TRAILER, TASK_TRAILER, landed_state
from app.gitops.lock import LockTimeout, lock_key
from app.gitops.mirror import Mirror, MirrorBusy, normalise_remote
from app.gitops.runner import DEFAULT_TIMEOUT, GitError, GitResult, GitRunner

# `odw integrate` runs the push landing once per landing: no `typing` or
# `dataclasses` at run time (the classes below are plain, with slots), only for
# the type checker.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Protocol, TypeVar

    from app.core.identity import Identity  # the pydantic model; never built here
    from app.gitops.lock import MergeLock

    R = TypeVar("R")
    R_co = TypeVar("R_co", covariant=True)

    class Attempt(Protocol[R_co]):
        """One landing method: what `LandingJob.land` asks of it, and its report."""

        def refresh(self, job: LandingJob) -> R_co | None:
            """Fetch what the attempt needs; a report when nothing is left to do."""

        def prepare(self, job: LandingJob, wt: Path, steps: Steps) -> None:
            """Put the worktree at what is to land (raises Stop)."""

        def attempt(self, job: LandingJob, wt: Path, steps: Steps) -> R_co:
            """Try the base once (counting `job.attempts`); raises Again or Stop."""

        def failed(
            self, job: LandingJob, steps: Steps, summary: str, conflicts: str | None
        ) -> R_co:
            """The report of a landing that stopped with `summary`."""


DEFAULT_ROADMAP = "docs/roadmap.md"
DEFAULT_MAX_ATTEMPTS = 10
DEFAULT_LOCK_TIMEOUT = 600.0

_TASK_ID = re.compile(r"^\d+(?:\.\d+)+$")
_RUN_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:/+-]{0,199}$")
_REF = re.compile(r"^(?!-)(?!.*\.\.)(?!.*//)(?!.*@\{)[A-Za-z0-9._/+-]+(?<![./])(?<!\.lock)$")


class IntegrationInputError(ValueError):
    """An argument that cannot name a task, branch, run or roadmap; nothing was touched."""


class Steps:
    """What one round has done so far: the report's booleans and the landed commit."""

    __slots__ = ("marked", "rebased", "sha", "squashed")

    def __init__(self) -> None:
        self.rebased = False
        self.marked = False
        self.squashed = False
        self.sha: str | None = None


class Again(Exception):
    """The base or the branch moved: fetch, prepare and try again. Its words say
    (after "<base> kept moving: ") what to report when no rounds are left."""


class Stop(Exception):
    """Ends a landing with a report-worthy reason."""

    def __init__(self, summary: str, conflicts: str | None = None) -> None:
        super().__init__(summary)
        self.summary = summary
        self.conflicts = conflicts


class Landing(Value):
    """What one landing of a task is given, by any method (push, pull request, tick)."""

    repo: str
    base: str
    branch: str
    task_id: str
    run_id: str
    data_dir: Path
    roadmap_path: str
    max_attempts: int
    title: str | None
    git_timeout: float
    token: str | None
    push_options: Sequence[str]
    identity: Identity | None
    delete_branch: bool

    def __init__(
        self,
        repo: str,
        base: str,
        branch: str,
        task_id: str,
        run_id: str,
        data_dir: Path,
        roadmap_path: str = DEFAULT_ROADMAP,
        max_attempts: int = DEFAULT_MAX_ATTEMPTS,
        title: str | None = None,
        git_timeout: float = DEFAULT_TIMEOUT,
        token: str | None = None,
        push_options: Sequence[str] = (),
        identity: Identity | None = None,  # None: the integrator's own (`INTEGRATOR_IDENTITY`)
        delete_branch: bool = True,
    ) -> None:
        super().__init__(
            repo=repo, base=base, branch=branch, task_id=task_id, run_id=run_id,
            data_dir=data_dir, roadmap_path=roadmap_path, max_attempts=max_attempts,
            title=title, git_timeout=git_timeout, token=token, push_options=push_options,
            identity=identity, delete_branch=delete_branch,
        )  # fmt: skip

    def __repr__(self) -> str:  # never the token
        return f"Landing({self.repo!r}, {self.base!r}, {self.branch!r}, {self.task_id!r})"


def _validate(landing: Landing) -> None:
    base, branch, task_id, run_id = landing.base, landing.branch, landing.task_id, landing.run_id
    if not _TASK_ID.match(task_id):
        raise IntegrationInputError(f"task id {task_id!r} is not a dotted number like 1.2.3")
    if not _RUN_ID.match(run_id):
        raise IntegrationInputError(
            f"run id {run_id!r} must be 1-200 characters of letters, digits and ._:/+-"
        )
    for what, ref in (("base", base), ("branch", branch)):
        if not _REF.match(ref):
            raise IntegrationInputError(f"{what} {ref!r} is not a valid branch name")
    if base == branch:
        raise IntegrationInputError(f"the task branch and the base are both {base!r}")
    roadmap_path = landing.roadmap_path
    parts = PurePosixPath(roadmap_path).parts
    if not parts or roadmap_path.startswith("/") or ".." in parts or "\\" in roadmap_path:
        raise IntegrationInputError(
            f"roadmap path {roadmap_path!r} must be relative inside the repository"
        )
    if landing.max_attempts < 1:
        raise IntegrationInputError("max attempts must be at least 1")


def _abort_leftover_rebase(runner: GitRunner, wt: Path) -> None:
    """A process killed mid-rebase leaves its state behind; `switch` refuses until it goes."""
    try:
        gitdir = Path(wt.joinpath(".git").read_text("utf-8").split(":", 1)[1].strip())
    except (OSError, IndexError):
        return
    if (gitdir / "rebase-merge").exists() or (gitdir / "rebase-apply").exists():
        runner.run("rebase", "--abort", cwd=wt, check=False)


class LandingJob:
    """One landing's git work: the checked arguments, the git runner and the mirror.

    Raises IntegrationInputError for a landing whose arguments cannot be right.
    Commits are made as `landing.identity`, by default the integrator's own.
    """

    def __init__(self, landing: Landing) -> None:
        _validate(landing)
        remote = normalise_remote(landing.repo)
        try:
            check_url(remote)
        except ValueError as exc:
            raise IntegrationInputError(str(exc)) from None
        token, identity = landing.token, landing.identity
        data_dir = Path(landing.data_dir)
        env = auth_env(data_dir, token)
        env.update(identity.env() if identity else identity_env(INTEGRATOR_NAME, INTEGRATOR_EMAIL))
        self.runner = GitRunner(
            timeout=landing.git_timeout, env=env, secrets=[token] if token else []
        )
        self.mirror = Mirror(data_dir, remote, self.runner)
        self.base = landing.base
        self.branch = landing.branch
        self.task_id = landing.task_id
        self.run_id = landing.run_id
        self.roadmap_path = landing.roadmap_path
        self.max_attempts = landing.max_attempts
        self.title = landing.title
        self.push_options = tuple(landing.push_options)
        self.delete_branch = landing.delete_branch
        self.fetched_head: str | None = None  # the task branch on origin when last fetched
        self.attempts = 0  # tries at the base (pushes, merges) of this landing

    @property
    def origin_base(self) -> str:
        return f"refs/remotes/origin/{self.base}"

    def land(
        self, strategy: Attempt[R], lock: MergeLock, lock_timeout: float = DEFAULT_LOCK_TIMEOUT
    ) -> R:
        """Land by `strategy`, holding the merge lock of the job's base; a lock wait
        that times out is a report, not an error."""
        try:
            with lock.hold(lock_key(self.mirror.remote, self.base), lock_timeout):
                return self._rounds(strategy)
        except LockTimeout as exc:
            summary = f"{exc}: another integration of {self.base} is still running; try again later"
            return strategy.failed(self, Steps(), summary, None)

    def _rounds(self, strategy: Attempt[R]) -> R:
        """The fetch-prepare-attempt loop. A round that went again before it reached
        the base (a pull request's branch pushed to meanwhile) counts towards
        `max_attempts` too, or a branch that kept moving would go round forever."""
        steps = Steps()
        rounds = 0
        try:
            done = strategy.refresh(self)
            if done is not None:
                return done
            # One worktree per base, kept between landings: the merge lock for the
            # base is held, so nothing else uses it, and each landing resets it.
            with self.mirror.kept_worktree(self.base, self.origin_base) as wt:
                _abort_leftover_rebase(self.runner, wt)
                while True:
                    steps = Steps()
                    strategy.prepare(self, wt, steps)
                    try:
                        return strategy.attempt(self, wt, steps)
                    except Again as again:
                        rounds += 1
                        if max(rounds, self.attempts) >= self.max_attempts:
                            raise Stop(f"{self.base} kept moving: {again}") from None
                    done = strategy.refresh(self)
                    if done is not None:
                        return done
        except Stop as stop:
            return strategy.failed(self, steps, stop.summary, stop.conflicts)
        except GitError as exc:
            return strategy.failed(self, steps, f"git failed: {exc}", None)
        except (MirrorBusy, OSError) as exc:
            return strategy.failed(self, steps, f"cannot use the mirror cache: {exc}", None)

    def git(self, wt: Path, *args: str, input: str | None = None) -> str:
        """A git call in the worktree that must succeed; its output."""
        return self.runner.run(*args, cwd=wt, input=input).stdout

    def report(
        self,
        steps: Steps,
        *,
        pushed: bool = False,
        summary: str | None = None,
        conflicts: str | None = None,
    ) -> IntegrationReport:
        """A task landing's report from what its round did."""
        if pushed and summary is None:
            summary = (
                f"landed {self.task_id} on {self.base} as {steps.sha} "
                f"after {self.attempts} push attempt(s)"
            )
        return IntegrationReport(
            ok=pushed and steps.rebased and steps.squashed and steps.marked,
            rebased=steps.rebased,
            squash_merged=steps.squashed,
            pushed=pushed,
            roadmap_marked_done=steps.marked,
            attempts=self.attempts,
            sha=steps.sha,
            conflicts=conflicts,
            summary=summary,
        )

    def refresh_task(self) -> IntegrationReport | None:
        """Fetch base and branch; a report when the task already landed, else None.

        A task branch deleted after landing must not turn a rerun into a failure, so
        when the pair cannot be fetched the base alone is fetched and checked.
        """
        try:
            self.mirror.fetch([self.base, self.branch])
        except GitError as both:
            remote = self.mirror.remote
            try:
                self.mirror.fetch([self.base])
            except GitError:
                raise Stop(f"cannot fetch {self.base} from {remote}: {both}") from None
            if (done := self._already_landed()) is not None:
                return done
            raise Stop(f"cannot fetch {self.branch} from {remote}: {both}") from None
        return self._already_landed()

    def _already_landed(self) -> IntegrationReport | None:
        state = landed_state(
            self.runner, self.mirror.path, self.origin_base, self.task_id, self.roadmap_path
        )
        if state.landed and state.ticked:
            sha = state.commits[0]
            return IntegrationReport.landed(
                sha=sha,
                attempts=self.attempts,
                summary=f"{self.task_id} had already landed on {self.base} as {sha}; "
                "nothing pushed",
            )
        if state.landed:
            raise Stop(
                f"{self.task_id} landed on {self.base} as {state.commits[0]} but its box in "
                f"{self.roadmap_path} is not ticked there; tick it by hand (not pushing again)"
            )
        if state.ticked:
            raise Stop(
                f"{self.task_id} is already ticked in {self.roadmap_path} on {self.base} but no "
                f"commit there carries '{TASK_TRAILER}: {self.task_id}'; refusing to land it twice"
            )
        return None

    def rebase(self, wt: Path, steps: Steps) -> None:
        """Rebase the fetched task branch onto the base, detached (no local branch to
        delete). `rebase <base> <head>` checks the head out itself; only when it
        cannot start, because a killed landing left the worktree dirty, is the
        worktree reset with `switch --discard-changes` first."""
        head = f"refs/remotes/origin/{self.branch}"
        result = self._start_rebase(wt, head)
        if result.returncode != 0 and not self._conflicted(wt):
            self.runner.run("rebase", "--abort", cwd=wt, check=False)
            self.git(wt, "switch", "--quiet", "--discard-changes", "--detach", head)
            result = self._start_rebase(wt, head)
        if result.returncode != 0:
            paths = self._conflicted(wt)
            self.runner.run("rebase", "--abort", cwd=wt, check=False)
            if not paths:
                raise Stop(
                    f"rebase of {self.branch} onto origin/{self.base} failed: "
                    f"{result.stderr.strip() or result.stdout.strip()}"
                )
            raise Stop(
                f"rebase of {self.branch} onto origin/{self.base} conflicts in "
                f"{', '.join(paths)}; fix it on the branch (origin was not changed)",
                conflicts="conflicting paths: " + ", ".join(paths),
            )
        steps.rebased = True

    def _start_rebase(self, wt: Path, head: str) -> GitResult:
        return self.runner.run(
            "rebase", "--quiet", "--no-autostash", self.origin_base, head, cwd=wt, check=False
        )

    def _conflicted(self, wt: Path) -> list[str]:
        return self.git(wt, "diff", "--name-only", "--diff-filter=U").split()

    def mark_done(self, wt: Path, steps: Steps) -> None:
        """Tick the task's roadmap box on the rebased head (a commit of its own)."""
        path = wt / self.roadmap_path
        try:
            text = path.read_bytes().decode("utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise Stop(f"cannot read {self.roadmap_path} on {self.branch}: {exc}") from None
        if self.title is None:
            self.title = task_headline(text, self.task_id)
        if not is_ticked(text, self.task_id):
            try:
                edited = tick(text, self.task_id)
            except TickError as exc:
                raise Stop(f"cannot tick {self.task_id} in {self.roadmap_path}: {exc}") from None
            path.write_bytes(edited.encode("utf-8"))
            message = f"Mark {self.task_id} done in {self.roadmap_path}"
            self.git(wt, "commit", "--quiet", "--no-verify", "-m", message, "--", self.roadmap_path)
        steps.marked = True

    def delete_task_branch(self, wt: Path, report: IntegrationReport) -> IntegrationReport:
        """After landing, delete the task branch on origin as GitHub's "delete head branches" does.

        Leased on the head that was landed: a branch that moved since is kept.
        """
        if not self.delete_branch or self.fetched_head is None:
            return report
        result = self.runner.run(
            "push", "--porcelain", "--no-verify", "origin",
            f"--force-with-lease=refs/heads/{self.branch}:{self.fetched_head}",
            f":refs/heads/{self.branch}", cwd=wt, check=False,
        )  # fmt: skip
        if result.returncode == 0:
            note = f"; deleted {self.branch} on origin"
        else:
            why = (result.stderr.strip().splitlines() or ["git push failed"])[-1]
            note = f"; kept {self.branch} on origin (could not delete it: {why})"
        return report.model_copy(update={"summary": (report.summary or "") + note})

    def message(self) -> str:
        """The squash commit's message, pushed or merged: subject, body, ODW trailers."""
        return (
            f"{squash_subject(self.title, self.task_id)}\n\n"
            f"Squash of {self.branch} onto {self.base}.\n\n"
            f"{TASK_TRAILER}: {self.task_id}\n"
            f"{RUN_TRAILER}: {self.run_id}\n"
        )


class TaskAttempt:
    """What the push and the pull-request methods share: the task's fetch and
    landed check, its branch rebased and ticked, an `IntegrationReport`."""

    def refresh(self, job: LandingJob) -> IntegrationReport | None:
        return job.refresh_task()

    def prepare(self, job: LandingJob, wt: Path, steps: Steps) -> None:
        job.rebase(wt, steps)
        job.mark_done(wt, steps)

    def failed(
        self, job: LandingJob, steps: Steps, summary: str, conflicts: str | None
    ) -> IntegrationReport:
        return job.report(steps, summary=summary, conflicts=conflicts)
