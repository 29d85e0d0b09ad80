"""Squash integration with fetch-rebase-retry under the merge lock.

Under the lock for (repository, base), in a worktree of the mirror kept for
that base: fetch; stop early if the task already landed; rebase the task
branch (detached) onto `origin/<base>`; tick its roadmap box; move HEAD back to
`origin/<base>` keeping the tree and commit it as one squash commit with
`ODW-Task`/`ODW-Run` trailers; push `HEAD:<base>`. A non-fast-forward rejection
repeats all of it from a fresh fetch, up to `max_attempts` pushes; anything
else stops with the reason. The push is the only write to the base, so a crash
at any point leaves the base without the task or with exactly one commit for
it. Once landed, the task branch is deleted on origin (leased on the head that
was landed) unless the caller keeps it. The loop (`_Integration.land`) is the
pull-request method's too; only the attempt (here: squash and push) differs.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
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
from app.gitops.push import PushStatus, push_head
from app.gitops.runner import DEFAULT_TIMEOUT, GitError, GitResult, GitRunner

# `odw integrate` runs this module once per landing: no `typing` or `dataclasses`
# at run time (the classes below are plain, with slots), only for the type checker.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from app.core.identity import Identity  # the pydantic model; never built here
    from app.gitops.lock import MergeLock

DEFAULT_ROADMAP = "docs/roadmap.md"
DEFAULT_MAX_ATTEMPTS = 10
DEFAULT_LOCK_TIMEOUT = 600.0

_TASK_ID = re.compile(r"^\d+(?:\.\d+)+$")
_RUN_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:/+-]{0,199}$")
_REF = re.compile(r"^(?!-)(?!.*\.\.)(?!.*//)(?!.*@\{)[A-Za-z0-9._/+-]+(?<![./])(?<!\.lock)$")


class IntegrationInputError(ValueError):
    """An argument that cannot name a task, branch, run or roadmap; nothing was touched."""


class _Steps:
    """What one attempt has done so far: the report's booleans and the squash commit."""

    __slots__ = ("marked", "rebased", "sha", "squashed")

    def __init__(self) -> None:
        self.rebased = False
        self.marked = False
        self.squashed = False
        self.sha: str | None = None


class _Again(Exception):
    """The base or the branch moved: fetch, rebase and try again. As an attempt
    raises it, it says (after "<base> kept moving: ") what to report when no
    tries are left."""


class _Stop(Exception):
    """Ends an integration with a report-worthy reason."""

    def __init__(self, summary: str, conflicts: str | None = None) -> None:
        super().__init__(summary)
        self.summary = summary
        self.conflicts = conflicts


class Landing(Value):
    """What one landing of a task is given, by either method (push or pull request)."""

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
    job = prepare(landing)
    return under_lock(job, lock, lock_timeout, job.run)


def prepare(landing: Landing) -> _Integration:
    """Check the arguments and set up the git runner and mirror for one landing
    (the push method's and the pull-request method's)."""
    base, branch, task_id, run_id = landing.base, landing.branch, landing.task_id, landing.run_id
    _validate(base, branch, task_id, run_id, landing.roadmap_path, landing.max_attempts)
    remote = normalise_remote(landing.repo)
    try:
        check_url(remote)
    except ValueError as exc:
        raise IntegrationInputError(str(exc)) from None
    token, identity = landing.token, landing.identity
    data_dir = Path(landing.data_dir)
    env = auth_env(data_dir, token)
    env.update(identity.env() if identity else identity_env(INTEGRATOR_NAME, INTEGRATOR_EMAIL))
    runner = GitRunner(timeout=landing.git_timeout, env=env, secrets=[token] if token else [])
    return _Integration(runner, Mirror(data_dir, remote, runner), landing)


def under_lock(
    job: _Integration, lock: MergeLock, timeout: float, run: Callable[[], IntegrationReport]
) -> IntegrationReport:
    """`run` holding the merge lock of the job's base; a lock wait that times out
    is a report, not an error."""
    try:
        with lock.hold(lock_key(job.mirror.remote, job.base), timeout):
            return run()
    except LockTimeout as exc:
        return IntegrationReport(
            summary=f"{exc}: another integration of {job.base} is still running; try again later"
        )


def _abort_leftover_rebase(runner: GitRunner, wt: Path) -> None:
    """A process killed mid-rebase leaves its state behind; `switch` refuses until it goes."""
    try:
        gitdir = Path(wt.joinpath(".git").read_text("utf-8").split(":", 1)[1].strip())
    except (OSError, IndexError):
        return
    if (gitdir / "rebase-merge").exists() or (gitdir / "rebase-apply").exists():
        runner.run("rebase", "--abort", cwd=wt, check=False)


def _validate(
    base: str, branch: str, task_id: str, run_id: str, roadmap_path: str, max_attempts: int
) -> None:
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
    parts = PurePosixPath(roadmap_path).parts
    if not parts or roadmap_path.startswith("/") or ".." in parts or "\\" in roadmap_path:
        raise IntegrationInputError(
            f"roadmap path {roadmap_path!r} must be relative inside the repository"
        )
    if max_attempts < 1:
        raise IntegrationInputError("max attempts must be at least 1")


class _Integration:
    """One landing's git work: the runner, the mirror and the checked arguments."""

    def __init__(self, runner: GitRunner, mirror: Mirror, landing: Landing) -> None:
        self.runner = runner
        self.mirror = mirror
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

    def run(self) -> IntegrationReport:
        return self.land(self._push)

    def land(self, attempt: Callable[[Path, _Steps], IntegrationReport]) -> IntegrationReport:
        """The fetch-rebase-retry loop of either landing method.

        `attempt` lands the rebased, ticked head once (counting `attempts` when it
        tries the base) and returns the report, or raises _Again to go round from
        a fresh fetch, up to `max_attempts` rounds: a round that moved before it
        reached the base (a pull request's branch pushed to meanwhile) counts too,
        or a branch that kept moving would keep the landing going round forever.
        """
        steps = _Steps()
        rounds = 0
        try:
            done = self._refresh()
            if done is not None:
                return done
            # One worktree per base, kept between landings: the merge lock for the
            # base is held, so nothing else uses it, and each landing resets it.
            with self.mirror.kept_worktree(self.base, self.origin_base) as wt:
                _abort_leftover_rebase(self.runner, wt)
                while True:
                    steps = _Steps()
                    self._rebase(wt, steps)
                    self._mark_done(wt, steps)
                    try:
                        return attempt(wt, steps)
                    except _Again as again:
                        rounds += 1
                        if max(rounds, self.attempts) >= self.max_attempts:
                            raise _Stop(f"{self.base} kept moving: {again}") from None
                    done = self._refresh()
                    if done is not None:
                        return done
        except _Stop as stop:
            return self._report(steps, summary=stop.summary, conflicts=stop.conflicts)
        except GitError as exc:
            return self._report(steps, summary=f"git failed: {exc}")
        except (MirrorBusy, OSError) as exc:
            return self._report(steps, summary=f"cannot use the mirror cache: {exc}")

    def _push(self, wt: Path, steps: _Steps) -> IntegrationReport:
        """The push method's attempt: squash, push to the base."""
        self._squash(wt, steps)
        self.attempts += 1
        outcome = push_head(
            self.runner, wt, self.base, self.push_options, source=steps.sha or "HEAD"
        )
        if outcome.status is PushStatus.PUSHED:
            return self._delete_task_branch(wt, self._report(steps, pushed=True))
        if outcome.status is PushStatus.REFUSED:
            if refused_by_protection(outcome.message):
                raise _Stop(
                    f"push to {self.base} {PROTECTED_BASE} ({outcome.message}); "
                    "not retried: land it through its pull request "
                    "(`integration: pull-request`)"
                )
            raise _Stop(
                f"push to {self.base} rejected by the remote ({outcome.message}); "
                "not retried: allow ODW to push to the base, or land it by hand"
            )
        if outcome.status is PushStatus.FAILED:
            raise _Stop(
                f"push to {self.base} failed: {outcome.message}; inspect origin/"
                f"{self.base} before retrying (a rerun detects a landed task)"
            )
        raise _Again(
            f"{self.attempts} push(es) rejected as non-fast-forward; run the integration again"
        )

    def _delete_task_branch(self, wt: Path, report: IntegrationReport) -> IntegrationReport:
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

    def _report(
        self,
        steps: _Steps,
        *,
        pushed: bool = False,
        summary: str | None = None,
        conflicts: str | None = None,
    ) -> IntegrationReport:
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

    def _refresh(self) -> IntegrationReport | None:
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
                raise _Stop(f"cannot fetch {self.base} from {remote}: {both}") from None
            if (done := self._already_landed()) is not None:
                return done
            raise _Stop(f"cannot fetch {self.branch} from {remote}: {both}") from None
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
            raise _Stop(
                f"{self.task_id} landed on {self.base} as {state.commits[0]} but its box in "
                f"{self.roadmap_path} is not ticked there; tick it by hand (not pushing again)"
            )
        if state.ticked:
            raise _Stop(
                f"{self.task_id} is already ticked in {self.roadmap_path} on {self.base} but no "
                f"commit there carries '{TASK_TRAILER}: {self.task_id}'; refusing to land it twice"
            )
        return None

    def _git(self, wt: Path, *args: str, input: str | None = None) -> str:
        return self.runner.run(*args, cwd=wt, input=input).stdout

    def _rebase(self, wt: Path, steps: _Steps) -> None:
        # Detached throughout: no local branch is made, so none needs deleting.
        # `rebase <base> <head>` checks the fetched head out itself (one git call,
        # not two); only when it cannot start, because a killed landing left the
        # worktree dirty, is the worktree reset with `switch --discard-changes`.
        head = f"refs/remotes/origin/{self.branch}"
        result = self._start_rebase(wt, head)
        if result.returncode != 0 and not self._conflicted(wt):
            self.runner.run("rebase", "--abort", cwd=wt, check=False)
            self._git(wt, "switch", "--quiet", "--discard-changes", "--detach", head)
            result = self._start_rebase(wt, head)
        if result.returncode != 0:
            paths = self._conflicted(wt)
            self.runner.run("rebase", "--abort", cwd=wt, check=False)
            if not paths:
                raise _Stop(
                    f"rebase of {self.branch} onto origin/{self.base} failed: "
                    f"{result.stderr.strip() or result.stdout.strip()}"
                )
            raise _Stop(
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
        return self._git(wt, "diff", "--name-only", "--diff-filter=U").split()

    def _mark_done(self, wt: Path, steps: _Steps) -> None:
        path = wt / self.roadmap_path
        try:
            text = path.read_bytes().decode("utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise _Stop(f"cannot read {self.roadmap_path} on {self.branch}: {exc}") from None
        if self.title is None:
            self.title = task_headline(text, self.task_id)
        if not is_ticked(text, self.task_id):
            try:
                edited = tick(text, self.task_id)
            except TickError as exc:
                raise _Stop(f"cannot tick {self.task_id} in {self.roadmap_path}: {exc}") from None
            path.write_bytes(edited.encode("utf-8"))
            message = f"Mark {self.task_id} done in {self.roadmap_path}"
            self._git(
                wt, "commit", "--quiet", "--no-verify", "-m", message, "--", self.roadmap_path
            )
        steps.marked = True

    def _squash(self, wt: Path, steps: _Steps) -> None:
        # The squash is one commit on the base with exactly the tree of the rebased,
        # ticked head: made from that tree by name, so it cannot differ from it, and
        # made without moving HEAD or touching the index (one git call, not three).
        sha = self._git(
            wt, "commit-tree", "HEAD^{tree}", "-p", self.origin_base, "-F", "-",
            input=self._message(),
        ).strip()  # fmt: skip
        if self.delete_branch:  # the head that was fetched and squashed: the deletion's lease
            self.fetched_head = self._git(
                wt, "rev-parse", f"refs/remotes/origin/{self.branch}"
            ).strip()
        steps.squashed = True
        steps.sha = sha

    def _message(self) -> str:
        return squash_message(self.title, self.task_id, self.branch, self.base, self.run_id)


def squash_message(title: str | None, task_id: str, branch: str, base: str, run_id: str) -> str:
    """The squash commit's message, pushed or merged: subject, body, ODW trailers."""
    return (
        f"{squash_subject(title, task_id)}\n\n"
        f"Squash of {branch} onto {base}.\n\n"
        f"{TASK_TRAILER}: {task_id}\n"
        f"{RUN_TRAILER}: {run_id}\n"
    )


# The words a push refused by branch protection reports (GitHub's GH006); the
# host then lands through the task's pull request.
PROTECTED_BASE = "refused by branch protection"
_PROTECTION_MARKERS = ("GH006", "protected branch", "Changes must be made through a pull request")


def refused_by_protection(message: str) -> bool:
    return any(m.lower() in message.lower() for m in _PROTECTION_MARKERS)
