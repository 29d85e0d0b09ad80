"""Pushes GitHub refuses for good, each said with what to do, none retried: a
ruleset asking for pull requests (landed through one), a ruleset that lets
nobody update the base, and a task that changes `.github/workflows/` pushed
with ODW's token, which has no `workflows` permission."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.apphost.adapters import MirrorIntegrator
from app.apphost.pr_landing import RunLanding, notice
from app.core.effects import Integrate
from app.core.roadmap_parse import parse_roadmap
from app.github import GitHubApp
from app.github.client import RepositoryClient
from app.gitops.lock import InProcessMergeLock
from app.gitops.pr_checks import ChecksWake
from app.store import Store
from tests.fakegithub import FakeGitHub
from tests.fakegithub.state import Repository
from tests.gitops_pr.test_pr_integrate import PERMISSIONS, REPO, ROADMAP

WORKFLOW = ".github/workflows/ci.yml"


@pytest.fixture
def repo(fake: FakeGitHub) -> Repository:
    return fake.create_repository(REPO, {"README.md": "# rules\n", "docs/roadmap.md": ROADMAP})


@pytest.fixture
def client(app: GitHubApp, fake: FakeGitHub, repo: Repository) -> RepositoryClient:
    installation = fake.install("octo", [REPO], PERMISSIONS)
    return app.repository(installation.id, REPO)


def _branch(repo: Repository, files: dict[str, str]) -> str:
    main = repo.git.sha("refs/heads/main")
    repo.git.commit_files("roadmap-1-1", files, "work 1.1", main)
    return "roadmap-1-1"


def _land(
    fake: FakeGitHub, client: RepositoryClient, store: Store, tmp_path: Path, method: str = "push"
) -> tuple[str, bool]:
    integrator = MirrorIntegrator(
        client, fake.git_url(REPO), "run-1", parse_roadmap(ROADMAP), tmp_path / "data",
        InProcessMergeLock(), None, method=method, landing=RunLanding(store, "run-1"),
    )  # fmt: skip
    request = Integrate(
        key="integrate:1.1", task="1.1", branch="roadmap-1-1", base="main", ticks=["1.1"]
    )
    report = integrator.integrate(request)
    return report.summary or "", report.ok


def test_a_ruleset_that_wants_pull_requests_is_landed_through_one(
    fake: FakeGitHub, repo: Repository, client: RepositoryClient, ci: ChecksWake, store: Store,
    tmp_path: Path,
) -> None:  # fmt: skip
    fake.add_ruleset(REPO, "main", ("pull_request",))
    _branch(repo, {"src/a.txt": "a\n"})
    summary, ok = _land(fake, client, store, tmp_path)
    assert ok, summary
    assert "through pull request #" in summary
    assert "Branch protection refused a push" in notice(store.projections.tasks("run-1"))


def test_a_ruleset_that_restricts_updates_stops_without_a_pull_request(
    fake: FakeGitHub, repo: Repository, client: RepositoryClient, store: Store, tmp_path: Path
) -> None:
    # "Cannot update this protected ref." refuses merges too: a pull request would
    # only wait and fail, so the landing stops and names the ruleset's bypass list.
    fake.add_ruleset(REPO, "main", ("update", "pull_request"))
    main = repo.git.sha("refs/heads/main")
    _branch(repo, {"src/a.txt": "a\n"})
    summary, ok = _land(fake, client, store, tmp_path)
    assert not ok
    assert "GH013" in summary and "Cannot update this protected ref" in summary
    assert "bypass list" in summary and "not retried" in summary
    assert not fake.pulls and repo.git.sha("refs/heads/main") == main
    assert not notice(store.projections.tasks("run-1"))


@pytest.mark.parametrize("method", ["push", "pull-request"], ids=["push", "pull-request"])
def test_a_task_that_changes_workflows_stops_and_says_a_person_lands_it(
    fake: FakeGitHub, repo: Repository, client: RepositoryClient, ci: ChecksWake, store: Store,
    tmp_path: Path, method: str,
) -> None:  # fmt: skip
    _branch(repo, {WORKFLOW: "on: push\n", "src/a.txt": "a\n"})
    # The base moved since: the rebased task commit is new to GitHub, and it is what
    # GitHub looks at (the fake refuses new commits that touch workflow files).
    main = repo.git.commit_files("main", {"README.md": "# moved\n"}, "moved", repo.git.sha("main"))
    summary, ok = _land(fake, client, store, tmp_path, method)
    assert not ok
    assert "`workflows` permission" in summary and "not retried" in summary
    assert "a person lands this task" in summary
    assert repo.git.sha("refs/heads/main") == main
    assert not [p for p in fake.pulls.values() if p.merged]
    pushes = [r for r in fake.requests if r["method"] == "PUT"]
    assert not pushes  # never a merge: the branch to merge could not be pushed


def test_a_ruleset_on_the_branch_a_pull_request_lands_from_stops_and_says_so(
    fake: FakeGitHub, repo: Repository, client: RepositoryClient, ci: ChecksWake, store: Store,
    tmp_path: Path,
) -> None:  # fmt: skip
    # Going round again would meet the same refusal on every round.
    fake.add_ruleset(REPO, "integrate-1-1", ("pull_request",))
    main = repo.git.sha("refs/heads/main")
    _branch(repo, {"src/a.txt": "a\n"})
    summary, ok = _land(fake, client, store, tmp_path, "pull-request")
    assert not ok
    assert "push of the rebased integrate-1-1 refused by GitHub" in summary
    assert "exempt ODW's branches" in summary and "not retried" in summary
    assert not fake.pulls and repo.git.sha("refs/heads/main") == main
