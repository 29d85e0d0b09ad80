"""Drives every port of `app/github` against the fake and reads back which
REST routes were sent: the permission tests and the PyGithub contract test
both hold those routes to their tables."""

from __future__ import annotations

from pathlib import Path

from app.github.client import RepositoryClient
from app.github.protocols import CheckAction, CheckRunFields
from tests.fakegithub import FakeGitHub
from tests.fakegithub.state import Repository


def drive_every_port(
    client: RepositoryClient, fake: FakeGitHub, repo: Repository, tmp: Path
) -> None:
    """One call of every port method, in an order that gives each its subject."""
    sha = repo.git.sha("refs/heads/main") or ""
    client.contents.file_at("docs/roadmap.md", sha)
    client.refs.create_branch("roadmap-1-1", sha)
    head = repo.git.commit_files("roadmap-1-1", {"f": "1"}, "work", parent=sha)
    client.refs.move_branch("roadmap-1-1", head)
    client.contents.branch_sha("roadmap-1-1")
    check = client.checks.create_check_run(
        "ODW · 1.1", head, CheckRunFields(status="queued", actions=[CheckAction("R", "r", "r")])
    )
    client.checks.update_check_run(check.id, CheckRunFields(conclusion="success"))
    client.checks.check_runs_for_ref(head)
    pull = client.pulls.create_pull("roadmap-1-1", "main", "1.1", "b", draft=False)
    client.pulls.find_pull("roadmap-1-1", "main")
    client.pulls.update_pull(pull.number, body="c")
    client.pulls.get_pull(pull.number)
    comment = client.comments.create_comment(pull.number, "<!-- m -->")
    client.comments.edit_comment(comment.id, "<!-- m --> 2")
    client.comments.list_comments(pull.number)
    client.comments.find_marked_comment(pull.number, "<!-- m -->", fake.bot_login)
    client.reactions.react_to_comment(comment.id, "eyes")
    client.permissions.permission_of("octo")
    inputs = {"stage": "plan", "task": "1.1", "token": "t"}
    run = client.dispatch.dispatch("odw-stage.yml", "roadmap-1-1", inputs)
    fake.upload_artifact(run.run_id, "odw-verdict", {"v.json": "{}"})
    fake.complete_run(run.run_id)
    client.runs.get_run(run.run_id)
    client.runs.list_runs("odw-stage.yml")
    client.runs.list_jobs(run.run_id)
    (artifact,) = client.artifacts.list_artifacts(run.run_id)
    client.artifacts.download_artifact(artifact, tmp / "a", 10_000)
    client.check_states.check_states(head)
    client.protection.required_contexts("main")
    client.pulls.merge_pull(pull.number, head)
    client.refs.create_branch("live-check", sha)
    client.refs.delete_branch("live-check")


def routes_sent(fake: FakeGitHub) -> set[tuple[str, str]]:
    """(method, OpenAPI path) of every request the fake answered."""
    sent = set()
    for request in fake.requests:
        matched = fake.openapi.match(request["path"])
        assert matched is not None, request["path"]
        sent.add((request["method"], matched[0]))
    return sent
