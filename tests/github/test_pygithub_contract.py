"""PyGithub's own API over exactly the REST operations app/github uses, against
the fake: if the fake drifts from what PyGithub sends or parses, this fails.

`CONTRACT` names each operation; the last test drives every adapter port and
checks the routes it used are exactly these (a new route needs a contract)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from github import Auth, Github, GithubIntegration
from github.CheckRun import CheckRun
from github.PaginatedList import PaginatedList

from app.github.client import RepositoryClient
from tests.fakegithub import FakeGitHub
from tests.fakegithub.state import Installation, Repository
from tests.github.conftest import REPO
from tests.github.drive import drive_every_port, routes_sent

R = "/repos/{owner}/{repo}"
CONTRACT = {
    "installation token": ("POST", "/app/installations/{installation_id}/access_tokens"),
    "contents at a sha": ("GET", R + "/contents/{path}"),
    "get ref": ("GET", R + "/git/ref/{ref}"),
    "create ref": ("POST", R + "/git/refs"),
    "move ref": ("PATCH", R + "/git/refs/{ref}"),
    "delete ref": ("DELETE", R + "/git/refs/{ref}"),
    "create check run": ("POST", R + "/check-runs"),
    "update check run": ("PATCH", R + "/check-runs/{check_run_id}"),
    "check runs for ref": ("GET", R + "/commits/{ref}/check-runs"),
    "create comment": ("POST", R + "/issues/{issue_number}/comments"),
    "list comments": ("GET", R + "/issues/{issue_number}/comments"),
    "edit comment": ("PATCH", R + "/issues/comments/{comment_id}"),
    "react": ("POST", R + "/issues/comments/{comment_id}/reactions"),
    "permission": ("GET", R + "/collaborators/{username}/permission"),
    "create pull": ("POST", R + "/pulls"),
    "get pull": ("GET", R + "/pulls/{pull_number}"),
    "find pull": ("GET", R + "/pulls"),
    "update pull": ("PATCH", R + "/pulls/{pull_number}"),
    "merge pull": ("PUT", R + "/pulls/{pull_number}/merge"),
    "dispatch": ("POST", R + "/actions/workflows/{workflow_id}/dispatches"),
    "get run": ("GET", R + "/actions/runs/{run_id}"),
    "list runs": ("GET", R + "/actions/workflows/{workflow_id}/runs"),
    "list jobs": ("GET", R + "/actions/runs/{run_id}/jobs"),
    "list artifacts": ("GET", R + "/actions/runs/{run_id}/artifacts"),
    "artifact zip": ("GET", R + "/actions/artifacts/{artifact_id}/{archive_format}"),
}


@pytest.fixture
def gh(fake: FakeGitHub, installation: Installation) -> Iterator[Github]:
    integration = GithubIntegration(
        auth=Auth.AppAuth(fake.app_id, fake.private_key_pem),
        base_url=fake.api_url,
        seconds_between_requests=None,
        seconds_between_writes=None,
    )
    token = integration.get_access_token(installation.id)
    assert token.token.startswith("ghs_") and token.expires_at is not None
    client = Github(
        auth=Auth.Token(token.token),
        base_url=fake.api_url,
        lazy=True,
        retry=None,
        seconds_between_requests=None,
        seconds_between_writes=None,
    )
    yield client
    client.close()


def test_contents_and_refs(gh: Github, fake: FakeGitHub, repo: Repository) -> None:
    r = gh.get_repo(REPO)
    sha = repo.git.sha("refs/heads/main") or ""
    content = r.get_contents("docs/roadmap.md", ref=sha)
    assert not isinstance(content, list)
    assert content.decoded_content.startswith(b"# Roadmap")
    assert r.get_git_ref("heads/main").object.sha == sha
    created = r.create_git_ref("refs/heads/roadmap-1-1", sha)
    assert (created.ref, created.object.sha) == ("refs/heads/roadmap-1-1", sha)
    ahead = repo.git.commit_files("scratch", {"a": "1"}, "a", parent=sha)
    created.edit(ahead)
    assert r.get_git_ref("heads/roadmap-1-1").object.sha == ahead
    assert routes_sent(fake) >= {
        CONTRACT[k] for k in ("contents at a sha", "get ref", "create ref", "move ref")
    }


def test_check_runs(gh: Github, fake: FakeGitHub, repo: Repository) -> None:
    r = gh.get_repo(REPO)
    sha = repo.git.sha("refs/heads/main") or ""
    run = r.create_check_run(
        "ODW · 1.1",
        sha,
        status="in_progress",
        external_id="e1",
        output={"title": "running", "summary": "s"},
        actions=[{"label": "Retry", "description": "again", "identifier": "retry"}],
    )
    assert (run.name, run.head_sha, run.status, run.external_id) == (
        "ODW · 1.1",
        sha,
        "in_progress",
        "e1",
    )
    run.edit(conclusion="success", output={"title": "done", "summary": "ok"})
    assert (run.status, run.conclusion, run.output.title) == ("completed", "success", "done")
    listed = PaginatedList(
        CheckRun,
        gh.requester,
        f"{r.url}/commits/{sha}/check-runs",
        {"check_name": "ODW · 1.1"},
        list_item="check_runs",
    )
    assert [(c.id, c.conclusion) for c in listed] == [(run.id, "success")]


def test_comments_reactions_and_permissions(gh: Github, fake: FakeGitHub, repo: Repository) -> None:
    r = gh.get_repo(REPO)
    number = fake.open_issue(REPO)
    issue = r.get_issue(number)
    comment = issue.create_comment("<!-- odw:status v1 -->\nrunning")
    assert comment.user.login == fake.bot_login and comment.user.type == "Bot"
    comment.edit("<!-- odw:status v1 -->\ndone")
    assert comment.body.endswith("done")
    assert [c.id for c in issue.get_comments()] == [comment.id]
    assert comment.create_reaction("eyes").content == "eyes"
    fake.add_collaborator(REPO, "writer", "write")
    assert r.get_collaborator_permission("writer") == "write"


def test_pull_requests(gh: Github, fake: FakeGitHub, repo: Repository) -> None:
    r = gh.get_repo(REPO)
    base = repo.git.sha("refs/heads/main") or ""
    head = repo.git.commit_files("roadmap-1-1", {"f": "1"}, "work", parent=base)
    pull = r.create_pull(base="main", head="roadmap-1-1", title="1.1", body="b", draft=True)
    assert (pull.number, pull.draft, pull.head.sha, pull.base.ref) == (1, True, head, "main")
    assert r.get_pull(pull.number).title == "1.1"
    found = r.get_pulls(state="open", head="octo:roadmap-1-1", base="main")
    assert [p.number for p in found] == [pull.number]
    pull.edit(body="updated")
    assert pull.body == "updated"
    fake.pulls[(REPO, pull.number)].draft = False
    status = pull.merge(merge_method="squash", sha=head, commit_title="1.1 (#1)")
    assert status.merged and status.sha == repo.git.sha("refs/heads/main")


def test_actions_dispatch_runs_jobs_and_artifacts(
    gh: Github, fake: FakeGitHub, repo: Repository, tmp_path: Path
) -> None:
    r = gh.get_repo(REPO)
    inputs = {"stage": "plan", "task": "1.1", "token": "t"}
    dispatched = r.get_workflow("odw-stage.yml").create_dispatch(
        "main", inputs, throw=True, return_run_details=True
    )
    run_id = dispatched.id
    fake.start_run(run_id)
    fake.upload_artifact(run_id, "odw-verdict", {"v.json": "{}"})
    fake.complete_run(run_id, "success")
    run = r.get_workflow_run(run_id)
    assert (run.status, run.conclusion, run.display_title) == (
        "completed",
        "success",
        "odw plan 1.1 [t]",
    )
    runs = r.get_workflow("odw-stage.yml").get_runs(branch="main", event="workflow_dispatch")
    assert [x.id for x in runs] == [run_id]
    assert [(j.name, j.conclusion) for j in run.jobs()] == [("stage", "success")]
    (artifact,) = list(run.get_artifacts())
    assert artifact.name == "odw-verdict"
    status, headers, _ = gh.requester.requestJson("GET", artifact.archive_download_url)
    assert status == 302 and headers["location"].startswith(fake.storage_url)


def test_the_adapter_uses_exactly_the_contracted_routes(
    client: RepositoryClient, fake: FakeGitHub, repo: Repository, tmp_path: Path
) -> None:
    drive_every_port(client, fake, repo, tmp_path)
    assert routes_sent(fake) == set(CONTRACT.values())
