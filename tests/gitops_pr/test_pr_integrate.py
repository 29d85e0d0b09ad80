"""Landing through pull requests on a base that refuses pushes (branch protection)."""

from __future__ import annotations

import subprocess
import threading
from pathlib import Path

import pytest

from app.apphost.adapters import MirrorIntegrator
from app.apphost.pr_landing import GitHubPullPort, RunLanding, notice
from app.core.effects import Integrate
from app.core.integration import IntegrationReport
from app.core.roadmap_parse import parse_roadmap
from app.github import GitHubApp
from app.github.client import RepositoryClient
from app.gitops.landed import TASK_TRAILER
from app.gitops.landing_job import Landing, LandingJob
from app.gitops.lock import InProcessMergeLock
from app.gitops.pr_checks import ChecksWake
from app.gitops.pr_integrate import PullRequestAttempt
from app.store import Store
from tests.fakegithub import FakeGitHub
from tests.fakegithub.faults import Fault, server_error_after_write
from tests.fakegithub.state import Repository
from tests.rendering import ISSUE_REFERENCE, MENTION

REPO = "octo/guarded"
ROADMAP = "# Roadmap\n\n- [ ] 1.1 First task\n- [ ] 1.2 Second task\n- [ ] 1.3 Third task\n"
MERGE = "/repos/{owner}/{repo}/pulls/{pull_number}/merge"
PERMISSIONS = {
    "administration": "read",
    "checks": "write",
    "contents": "write",
    "issues": "write",
    "metadata": "read",
    "pull_requests": "write",
    "statuses": "read",
}


@pytest.fixture
def repo(fake: FakeGitHub) -> Repository:
    repo = fake.create_repository(REPO, {"README.md": "# guarded\n", "docs/roadmap.md": ROADMAP})
    fake.protect_branch(REPO, "main", ["ci/test"])
    return repo


@pytest.fixture
def client(app: GitHubApp, fake: FakeGitHub, repo: Repository) -> RepositoryClient:
    installation = fake.install("octo", [REPO], PERMISSIONS)
    return app.repository(installation.id, REPO)


def _task_branch(repo: Repository, task: str) -> str:
    branch = "roadmap-" + task.replace(".", "-")
    main = repo.git.sha("refs/heads/main")
    repo.git.commit_files(branch, {f"src/{branch}.txt": f"work for {task}\n"}, f"work {task}", main)
    return branch


def _through_pull(
    client: RepositoryClient, wake: ChecksWake, landing: Landing
) -> IntegrationReport:
    """Land through the pull request as the App does, with a short checks timeout."""
    port = GitHubPullPort(client.pulls, client.check_states, client.protection)
    attempt = PullRequestAttempt(port, wake=wake, checks_timeout=30, poll=0.5)
    return LandingJob(landing).land(attempt, InProcessMergeLock())


def _integrator(
    fake: FakeGitHub, client: RepositoryClient, store: Store, roadmap: str, data_dir: Path
) -> MirrorIntegrator:
    """The App's integrator for run `run-1`: pushes first, pull requests once refused."""
    return MirrorIntegrator(
        client, fake.git_url(REPO), "run-1", parse_roadmap(roadmap), data_dir,
        InProcessMergeLock(), None, landing=RunLanding(store, "run-1"),
    )  # fmt: skip


def _integrate(task: str, branch: str) -> Integrate:
    return Integrate(key=f"integrate:{task}", task=task, branch=branch, base="main", ticks=[task])


def _trailers(repo: Repository) -> list[str]:
    log = repo.git.git("log", "--format=%(trailers:key=ODW-Task,valueonly)", "main")
    return [line.strip() for line in log.splitlines() if line.strip()]


def test_the_protected_base_refuses_a_plain_push(
    fake: FakeGitHub, repo: Repository, tmp_path: Path
) -> None:
    work = tmp_path / "work"
    repo.git.git("config", "receive.denyCurrentBranch", "ignore")
    subprocess.run(["git", "clone", "-q", str(repo.git.path), str(work)], check=True)
    (work / "x").write_text("x\n")
    env = {"GIT_AUTHOR_NAME": "a", "GIT_AUTHOR_EMAIL": "a@x", "GIT_COMMITTER_NAME": "a",
           "GIT_COMMITTER_EMAIL": "a@x", "PATH": "/usr/bin:/bin"}  # fmt: skip
    subprocess.run(["git", "add", "x"], cwd=work, check=True)
    subprocess.run(["git", "commit", "-qm", "x"], cwd=work, check=True, env=env)
    pushed = subprocess.run(
        ["git", "push", "origin", "HEAD:main"], cwd=work, capture_output=True, text=True
    )
    assert pushed.returncode != 0
    assert "GH006: Protected branch update failed" in pushed.stderr


def test_every_task_of_a_three_task_run_lands_through_its_pull_request(
    fake: FakeGitHub,
    repo: Repository,
    client: RepositoryClient,
    ci: ChecksWake,
    store: Store,
    tmp_path: Path,
) -> None:
    tasks = ["1.1", "1.2", "1.3"]
    branches = {t: _task_branch(repo, t) for t in tasks}
    # 1.1's pull request is ready for review and is merged itself; 1.2's is a draft
    # (the REST API cannot make it ready) and 1.3 has none: both land through an
    # `integrate-<id>` pull request, the task branch left alone until it is deleted.
    client.pulls.create_pull(branches["1.1"], "main", "Task 1.1", "", draft=False)
    draft = client.pulls.create_pull(branches["1.2"], "main", "Task 1.2", "", draft=True)
    integrator = _integrator(fake, client, store, ROADMAP, tmp_path / "data")
    reports = [integrator.integrate(_integrate(t, branches[t])) for t in tasks]
    for report in reports:
        assert report.ok, report.summary
        assert report.rebased and report.squash_merged and report.pushed
        assert report.roadmap_marked_done
        assert "through pull request #" in (report.summary or "")
    assert "Branch protection refused a push" in notice(store.projections.tasks("run-1"))
    merges = [r for r in fake.requests if r["method"] == "PUT" and r["path"].endswith("/merge")]
    assert [r["status"] for r in merges] == [200, 200, 200]
    assert all(r["body"]["merge_method"] == "squash" for r in merges)
    assert _trailers(repo) == ["1.3", "1.2", "1.1"]
    merged = [p for p in fake.pulls.values() if p.merged]
    assert sorted(p.head for p in merged) == ["integrate-1-2", "integrate-1-3", "roadmap-1-1"]
    assert not fake.pulls[(REPO, draft.number)].merged
    heads = repo.git.refs()
    assert not [
        ref for ref in heads if ref.startswith(("refs/heads/integrate-", "refs/heads/roadmap-"))
    ]
    roadmap = repo.git.show(repo.git.sha("refs/heads/main"), "docs/roadmap.md")
    assert roadmap is not None and roadmap.count(b"- [x]") == 3
    # Exactly one commit per task on the base, each a squash (one parent) by GitHub.
    subjects = repo.git.git("log", "--format=%s", "main").splitlines()
    assert subjects == [
        "Third task (1.3)", "Second task (1.2)", "First task (1.1)", "Initial commit",
    ]  # fmt: skip
    message = repo.git.git("log", "-1", "--format=%B", "main")
    assert f"{TASK_TRAILER}: 1.3" in message and "ODW-Run: run-1" in message


def test_a_merge_answered_500_that_did_merge_is_not_merged_again(
    fake: FakeGitHub, repo: Repository, client: RepositoryClient, ci: ChecksWake, tmp_path: Path
) -> None:
    branch = _task_branch(repo, "1.1")
    fake.inject("PUT", MERGE, server_error_after_write(500))
    landing = Landing(
        fake.git_url(REPO), "main", branch, "1.1", run_id="run-2", data_dir=tmp_path / "data",
        token=client.git_token(write=True),
    )  # fmt: skip
    report = _through_pull(client, ci, landing)
    assert report.ok, report.summary
    merges = [r for r in fake.requests if r["method"] == "PUT" and r["path"].endswith("/merge")]
    assert [r["status"] for r in merges] == [500]
    assert _trailers(repo) == ["1.1"]
    assert report.sha == repo.git.sha("refs/heads/main")


def test_a_failing_required_check_stops_without_merging(
    fake: FakeGitHub, repo: Repository, client: RepositoryClient, tmp_path: Path
) -> None:
    branch = _task_branch(repo, "1.1")
    pull = client.pulls.create_pull(branch, "main", "Task 1.1", "", draft=False)
    wake = ChecksWake()

    def fail_ci() -> None:
        while not (sha := repo.git.sha(f"refs/heads/{branch}")) or sha == pull.head_sha:
            threading.Event().wait(0.02)
        fake.set_status(REPO, sha, "ci/test", "failure")
        wake.poke(sha)

    threading.Thread(target=fail_ci, daemon=True).start()
    landing = Landing(
        fake.git_url(REPO), "main", branch, "1.1", run_id="run-3", data_dir=tmp_path / "data",
        token=client.git_token(write=True),
    )  # fmt: skip
    report = _through_pull(client, wake, landing)
    assert not report.ok and not report.pushed
    assert "'ci/test' failed" in (report.summary or "")
    assert "/odw retry 1.1" in (report.summary or "")
    assert not [r for r in fake.requests if r["path"].endswith("/merge")]


def _land(
    fake: FakeGitHub, client: RepositoryClient, ci: ChecksWake, tmp_path: Path, branch: str
) -> IntegrationReport:
    """Land task 1.1 from `branch` through its pull request, with two merge attempts."""
    landing = Landing(
        fake.git_url(REPO), "main", branch, "1.1", run_id="run-4", data_dir=tmp_path / "data",
        token=client.git_token(write=True), max_attempts=2,
    )  # fmt: skip
    return _through_pull(client, ci, landing)


def test_a_merge_refused_on_every_attempt_stops_after_max_attempts(
    fake: FakeGitHub, repo: Repository, client: RepositoryClient, ci: ChecksWake, tmp_path: Path
) -> None:
    branch = _task_branch(repo, "1.1")
    main = repo.git.sha("refs/heads/main")
    refused = Fault(405, body={"message": "Pull Request is not mergeable"})
    fake.inject("PUT", MERGE, refused, times=2)
    report = _land(fake, client, ci, tmp_path, branch)
    (pull,) = [p for p in fake.pulls.values() if p.head == "integrate-1-1"]
    assert not report.ok and not report.pushed and report.attempts == 2
    assert report.rebased and report.roadmap_marked_done and not report.squash_merged
    assert report.summary == (
        f"main kept moving: 2 merge attempt(s) of pull request #{pull.number} refused "
        "(405 Pull Request is not mergeable); run it again"
    )
    assert repo.git.sha("refs/heads/main") == main and not pull.merged


def test_a_merge_github_refuses_outright_is_reported_not_retried(
    fake: FakeGitHub, repo: Repository, client: RepositoryClient, ci: ChecksWake, tmp_path: Path
) -> None:
    branch = _task_branch(repo, "1.1")
    fake.inject("PUT", MERGE, Fault(422, body={"message": "Validation Failed"}))
    report = _land(fake, client, ci, tmp_path, branch)
    assert not report.ok and not report.pushed and report.attempts == 1
    assert (report.summary or "").startswith("GitHub failed: GitHub ")
    assert "422 Validation Failed" in (report.summary or "")
    merges = [r for r in fake.requests if r["method"] == "PUT" and r["path"].endswith("/merge")]
    assert [r["status"] for r in merges] == [422]


def test_an_integrate_pull_requests_title_mentions_and_references_nothing(
    fake: FakeGitHub,
    repo: Repository,
    client: RepositoryClient,
    ci: ChecksWake,
    store: Store,
    tmp_path: Path,
) -> None:
    main = repo.git.sha("refs/heads/main")
    hostile = "# Roadmap\n\n- [ ] 1.1 Greet @admin and &#64;org/team, Fixes #3 <!-- hidden -->\n"
    repo.git.commit_files("main", {"docs/roadmap.md": hostile}, "roadmap", main)
    branch = _task_branch(repo, "1.1")
    integrator = _integrator(fake, client, store, hostile, tmp_path / "data")
    report = integrator.integrate(_integrate("1.1", branch))
    assert report.ok, report.summary
    [pull] = [p for p in fake.pulls.values() if p.head == "integrate-1-1"]
    assert "Greet" in pull.title
    assert not MENTION.search(pull.title) and not ISSUE_REFERENCE.search(pull.title)
    assert "<!--" not in pull.title


def test_a_repository_that_disallows_squash_merging_stops_at_the_first_merge(
    fake: FakeGitHub, repo: Repository, client: RepositoryClient, ci: ChecksWake, tmp_path: Path
) -> None:
    # GitHub answers this 405 on every squash merge while the setting is off: going
    # round again can only repeat it, so the landing stops and says what to change.
    branch = _task_branch(repo, "1.1")
    main = repo.git.sha("refs/heads/main")
    fake.merge_settings(REPO, squash=False)
    report = _land(fake, client, ci, tmp_path, branch)
    assert not report.ok and not report.pushed and report.attempts == 1
    assert "405 Squash merges are not allowed on this repository." in (report.summary or "")
    assert "Allow squash merging" in (report.summary or "")
    merges = [r for r in fake.requests if r["method"] == "PUT" and r["path"].endswith("/merge")]
    assert [r["status"] for r in merges] == [405]
    assert repo.git.sha("refs/heads/main") == main
