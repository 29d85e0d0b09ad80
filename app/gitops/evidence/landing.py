"""The integrate port for local mode: squash onto origin's base under an in-process lock.

`integrate` is `app.gitops.integrate` with the task's roadmap title; a crash
of the integrator is reported as an infra fault. `inspect` (after a crash of
the whole run) fetches the base afresh and answers only what is visible there:
a landed, ticked task gives a complete report, anything else gives None and
the core fails the task rather than guess.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from pathlib import Path

from app.core.effects import Integrate
from app.core.identity import Identity
from app.core.integration import IntegrationReport
from app.core.naming import ROADMAP_PATH
from app.core.roadmap import Roadmap
from app.engine.ports import PortFault
from app.gitops import InProcessMergeLock, IntegrationInputError
from app.gitops.evidence.repo import REMOTE, LocalRepo, RepoError
from app.gitops.integrate import land
from app.gitops.landed import landed_state
from app.gitops.landing_job import Landing
from app.gitops.runner import GitError, GitRunner


def task_landing(
    url: str,
    request: Integrate,
    roadmap: Roadmap,
    *,
    run_id: str,
    data_dir: Path,
    identity: Identity | None,
    delete_branch: bool,
    token: str | None = None,
) -> Landing:
    """The landing `request` asks for, titled with the task's roadmap headline
    (local mode's and the App's)."""
    task = roadmap.get(request.task)
    return Landing(
        url, request.base, request.branch, request.task, run_id=run_id, data_dir=data_dir,
        roadmap_path=ROADMAP_PATH, title=task.headline if task is not None else None,
        token=token, identity=identity, delete_branch=delete_branch,
    )  # fmt: skip


def guarded(landing: Callable[[], IntegrationReport]) -> IntegrationReport:
    """Run a landing as the integrate port: refused input is a report, a crash of
    the integrator an infra fault (never retried blindly)."""
    try:
        return landing()
    except IntegrationInputError as exc:
        return IntegrationReport(summary=f"integration refused its input: {exc}")
    except Exception as exc:  # the integrator died: never retried blindly
        raise PortFault("infra", f"integrator crashed: {type(exc).__name__}: {exc}") from exc


class LocalIntegrator:
    def __init__(
        self,
        repo: LocalRepo,
        run_id: str,
        roadmap: Roadmap,
        *,
        identity: Identity,
        delete_branches: bool = True,
    ) -> None:
        self.repo = repo
        self.delete_branches = delete_branches
        self.run_id = run_id
        self.roadmap = roadmap
        self.identity = identity
        self.lock = InProcessMergeLock()
        self.data_dir = repo.state_dir / "data"

    def integrate(self, request: Integrate) -> IntegrationReport:
        landing = task_landing(
            self.repo.origin_url, request, self.roadmap, run_id=self.run_id,
            data_dir=self.data_dir, identity=self.identity, delete_branch=self.delete_branches,
        )  # fmt: skip
        report = guarded(lambda: land(landing, self.lock))
        if report.complete and self.delete_branches:
            self._forget_branch(request.branch)
        return report

    def _forget_branch(self, branch: str) -> None:
        """The landed branch leaves the clone too: its local branch and tracking ref.

        A branch checked out in some worktree of the clone is left alone.
        """
        runner = GitRunner()
        with contextlib.suppress(GitError):
            runner.run("branch", "--quiet", "-D", branch, cwd=self.repo.path, check=False)
            runner.run("update-ref", "-d", f"refs/remotes/{REMOTE}/{branch}",
                       cwd=self.repo.path, check=False)  # fmt: skip

    def inspect(self, request: Integrate) -> IntegrationReport | None:
        try:
            self.repo.fetch(request.base)
            state = landed_state(
                GitRunner(),
                self.repo.path,
                f"refs/remotes/{REMOTE}/{request.base}",
                request.task,
                ROADMAP_PATH,
            )
        except (RepoError, GitError):
            return None
        if not (state.landed and state.ticked):
            return None
        sha = state.commits[0]
        return IntegrationReport.landed(
            sha=sha,
            attempts=0,
            summary=f"found on {request.base} after a restart as {sha}: landed before the crash",
        )
