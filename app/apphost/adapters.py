"""The engine's ports over GitHub (app/github) and git (app/gitops) for one run.

The same `perform` local mode uses calls these: a stage is a workflow_dispatch
of `odw-stage.yml` on the task branch (its completion comes back later through
a `workflow_run` webhook or the reconciler), an integration is the squash
integrator on the App's mirror pushing with the installation token through
GIT_ASKPASS, and assessment and salvage are local mode's own, over the App's
bare clone of the repository. Nothing here decides; it only does and reports.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import cached_property
from pathlib import Path
from typing import Protocol

from app.apphost.dispatched import (
    DISPATCH_EVENT,
    WORKFLOW,
    Expected,
    resolve,
    run_tag,
)
from app.apphost.pr_landing import GitHubPullPort, RunLanding
from app.core.effects import DispatchStage, Integrate
from app.core.identity import Identity
from app.core.integration import IntegrationReport
from app.core.naming import ROADMAP_PATH, slug
from app.core.roadmap import Roadmap
from app.engine.ports import (
    AllowOneReset,
    AssessPort,
    Clock,
    GateJudgePort,
    LiveAttempt,
    SalvagePort,
    StageCompletion,
)
from app.github.client import RepositoryClient
from app.github.errors import GitHubError, Unprocessable
from app.github.protocols import Contents, Dispatch, DispatchedRun, Runs
from app.gitops import MergeLock
from app.gitops.auth import TOKEN_ENV, askpass_script
from app.gitops.evidence.assess import LocalAssessor, LocalSalvager
from app.gitops.evidence.landing import guarded, task_landing
from app.gitops.evidence.repo import REMOTE, LocalRepo, RepoError
from app.gitops.integrate import PROTECTED_BASE, land
from app.gitops.landed import landed_state
from app.gitops.landing_job import LandingJob
from app.gitops.pr_checks import CHECKS_WAKE
from app.gitops.pr_integrate import PullRequestAttempt
from app.gitops.runner import GitError, GitRunner, git
from app.gitops.start_over import start_over

log = logging.getLogger("odw.apphost")
# Required checks of a task's pull request are re-read this often when no
# check_suite / check_run / status webhook wakes the landing first.
PR_CHECKS_POLL = 15.0


def git_url(api_url: str, repository: str) -> str:
    """The repository's HTTPS git URL from the API URL (github.com or GHES `/api/v3`)."""
    api = api_url.rstrip("/")
    host = api.removesuffix("/api/v3")
    if api == "https://api.github.com":
        host = "https://github.com"
    return f"{host}/{repository}.git"


def attempt_dir(run_dir: Path, task: str, stage: str, attempt: int, lane: str) -> Path:
    """Where an attempt's verdict artifact is unpacked (local mode's layout)."""
    return run_dir / "stages" / slug(task) / f"{stage}-{attempt}{('-' + lane) if lane else ''}"


def app_repo(data_dir: Path, installation: int, repository: str, url: str, token: str) -> LocalRepo:
    """The App's bare clone of `repository` (for evidence and salvage), authenticated
    for network calls through GIT_ASKPASS; created on first use."""
    path = data_dir / "clones" / str(installation) / f"{repository}.git"
    if not (path / "HEAD").is_file():
        path.parent.mkdir(parents=True, exist_ok=True)
        git(path.parent, "init", "--quiet", "--bare", str(path))
        git(path, "remote", "add", REMOTE, url)
    env = {"GIT_ASKPASS": str(askpass_script(data_dir)), TOKEN_ENV: token}
    return LocalRepo(path=path, common_dir=path, origin_url=url, env=env)


class StageGitHub(Protocol):
    """What dispatching a stage uses of one repository (a `RepositoryClient` is one)."""

    @property
    def full_name(self) -> str: ...
    @property
    def contents(self) -> Contents: ...
    @property
    def refs(self) -> Contents: ...
    @property
    def dispatch(self) -> Dispatch: ...
    @property
    def runs(self) -> Runs: ...


@dataclass
class ActionsStages:
    """`StagePort.start` as a workflow_dispatch; completions arrive as inputs later.

    The run's id is recorded at dispatch (`dispatched`): GitHub returns it, or
    it is resolved once by `dispatched.resolve` (GHES). The run's name shows
    the attempt's tag (a keyed hash of its token), never the token."""

    client: StageGitHub
    run_id: str
    base_sha: str
    again: bool = False
    # The task branch is known to exist (saved with the task's GitHub handles).
    branch_ready: bool = False
    tag_key: bytes = b""
    bot: str = "odw[bot]"
    dispatched: dict[str, DispatchedRun] = field(default_factory=dict)
    # The App's clone, for a retry's fresh start (`DispatchStage.fresh`).
    clone: Callable[[], LocalRepo] | None = None

    def start(self, dispatch: DispatchStage) -> None:
        tag = run_tag(self.tag_key, dispatch.token)
        expected = Expected(self.client.full_name, dispatch.branch)
        if self.again:
            # The first try may have reached GitHub: its run, if listed, is the one.
            found = self._resolve(expected, tag, since=None)
            if found is not None:
                self.dispatched[dispatch.key] = found
                return
        if dispatch.fresh is not None:
            self._start_fresh(dispatch.branch, dispatch.base, dispatch.fresh)
        elif not self.branch_ready:
            self._create_branch(dispatch.branch, dispatch.base)
            self.branch_ready = True
        inputs = {
            "stage": dispatch.stage,
            "task": dispatch.task,
            "token": dispatch.token,
            "tag": tag,
            "run-id": self.run_id,
        }
        since = float(int(time.time()))  # GitHub's `created_at` has whole seconds
        try:
            self.dispatched[dispatch.key] = self.client.dispatch.dispatch(
                WORKFLOW, dispatch.branch, inputs, lambda: self._resolve(expected, tag, since)
            )
        except Unprocessable as exc:
            if '"tag"' not in exc.reason:
                raise
            raise Unprocessable(
                exc.operation,
                exc.status,
                f"{exc.reason} ({WORKFLOW} predates its `tag` input: run `odw init --force`)",
            ) from None

    def _create_branch(self, branch: str, base: str) -> None:
        """The task's branch, from the base as the run knows it (`base_sha`: where
        it started, or the newest squash it landed), so a task after its
        dependencies sees their landed work. Created without a look first: one
        that exists already (a resumed run's) is GitHub's 422, and kept."""
        head = self.base_sha or self.client.contents.branch_sha(base)
        if not head:
            raise RepoError(f"the base {base} has no head to start {branch} from")
        try:
            self.client.refs.create_branch(branch, head)
        except Unprocessable:
            if self.client.contents.branch_sha(branch) is None:
                raise

    def _start_fresh(self, branch: str, base: str, keep: str) -> None:
        """A retry starts over from the base tip, its earlier work kept on `keep`
        (`gitops.start_over`, in the App's clone; safe to repeat)."""
        if self.clone is None:
            raise RepoError(f"no clone to start {branch} over from")
        start_over(self.clone(), base=base, branch=branch, keep=keep)
        if self.client.contents.branch_sha(branch) is None:
            head = self.client.contents.branch_sha(base) or self.base_sha
            self.client.refs.create_branch(branch, head)
        self.branch_ready = True

    def _resolve(self, expected: Expected, tag: str, since: float | None) -> DispatchedRun | None:
        runs = self.client.runs.list_runs(WORKFLOW, branch=expected.branch, event=DISPATCH_EVENT)
        run = resolve(runs, expected, tag=tag, since=since, bot=self.bot)
        return None if run is None else DispatchedRun(run.id, run.html_url, "resolved")

    def wait(self, timeout: float | None) -> list[StageCompletion]:
        return []  # the App never waits: completions are webhook inputs

    def recover(self, attempts: Sequence[LiveAttempt]) -> list[StageCompletion]:
        return []  # the reconciler polls dispatched runs instead


@dataclass
class MirrorIntegrator:
    """The squash integrator on the App's mirror, pushing with the installation token."""

    client: RepositoryClient
    url: str
    run_id: str
    roadmap: Roadmap
    data_dir: Path
    lock: MergeLock
    identity: Identity | None
    delete_branches: bool = True
    method: str = "push"  # `.github/odw.yml` `integration`: push | pull-request
    landing: RunLanding | None = None  # remembers a base that refused pushes

    def integrate(self, request: Integrate) -> IntegrationReport:
        return guarded(lambda: self._land(request))

    def _land(self, request: Integrate) -> IntegrationReport:
        landing = task_landing(
            self.url, request, self.roadmap, run_id=self.run_id, data_dir=self.data_dir,
            identity=self.identity, delete_branch=self.delete_branches,
            token=self.client.git_token(write=True),
        )  # fmt: skip
        protected = self.landing is not None and self.landing.protected()
        if self.method != "pull-request" and not protected:
            report = land(landing, self.lock)
            if report.ok or PROTECTED_BASE not in (report.summary or ""):
                return report
            if self.landing is not None:
                self.landing.mark_protected(request.base)
        port = GitHubPullPort(self.client.pulls, self.client.check_states, self.client.protection)
        attempt = PullRequestAttempt(port, wake=CHECKS_WAKE, poll=PR_CHECKS_POLL)
        return LandingJob(landing).land(attempt, self.lock)

    def inspect(self, request: Integrate) -> IntegrationReport | None:
        """A landing visible on the base (trailer and ticked box), else None."""
        try:
            token = self.client.git_token()
            repo = app_repo(
                self.data_dir, self.client.installation_id, self.client.full_name, self.url, token
            )
            repo.fetch(request.base)
            state = landed_state(
                GitRunner(),
                repo.path,
                f"refs/remotes/{REMOTE}/{request.base}",
                request.task,
                ROADMAP_PATH,
            )
        except (RepoError, GitError, GitHubError):
            return None
        if not (state.landed and state.ticked):
            return None
        sha = state.commits[0]
        return IntegrationReport.landed(
            sha=sha, attempts=0, summary=f"found on {request.base} as {sha}: landed before"
        )


@dataclass
class AppPorts:
    """What `perform` needs for one effect of one run. Each port is built on
    first use, so an effect builds only its own: a dispatch touches no clone,
    an assessment makes no integrator."""

    make_stages: Callable[[], ActionsStages]
    make_integrator: Callable[[], MirrorIntegrator]
    make_evidence: Callable[[], tuple[AssessPort, SalvagePort]]
    clock: Clock = field(default=lambda: datetime.now(UTC))
    judge: GateJudgePort = field(default_factory=AllowOneReset)

    @cached_property
    def stages(self) -> ActionsStages:
        return self.make_stages()

    @cached_property
    def integrator(self) -> MirrorIntegrator:
        return self.make_integrator()

    @cached_property
    def _evidence(self) -> tuple[AssessPort, SalvagePort]:
        return self.make_evidence()

    @property
    def assessor(self) -> AssessPort:
        return self._evidence[0]

    @property
    def salvager(self) -> SalvagePort:
        return self._evidence[1]


def evidence_ports(
    repo: LocalRepo, run_dir: Path, identity: Identity | None
) -> tuple[LocalAssessor, LocalSalvager]:
    """Local mode's assessor and salvager, over the App's clone and the run's artifacts."""
    return LocalAssessor(repo, run_dir), LocalSalvager(repo, run_dir, identity)
