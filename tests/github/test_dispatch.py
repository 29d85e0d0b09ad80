"""Stage dispatch with `return_run_details`, and GHES without it."""

from __future__ import annotations

import pytest

from app.github import Unprocessable
from app.github.client import RepositoryClient
from tests.fakegithub import FakeGitHub
from tests.fakegithub.state import Repository

WORKFLOW = "odw-stage.yml"


def _inputs(token: str, stage: str = "plan") -> dict[str, str]:
    return {"stage": stage, "task": "1.1", "token": token}


def test_a_dispatch_learns_its_run_from_return_run_details(
    client: RepositoryClient, fake: FakeGitHub
) -> None:
    run = client.dispatch.dispatch(WORKFLOW, "main", _inputs("tok-1"), "tok-1")
    assert run.found_by == "return_run_details"
    held = fake.runs[run.run_id]
    assert (held.inputs, held.ref, held.event) == (_inputs("tok-1"), "main", "workflow_dispatch")
    sent = [r for r in fake.requests if r["path"].endswith("/dispatches")]
    assert [r["body"]["return_run_details"] for r in sent] == [True]
    assert client.runs.get_run(run.run_id).display_title == "odw plan 1.1 [tok-1]"


def test_ghes_without_return_run_details_finds_the_run_by_its_run_name_token(
    client: RepositoryClient, fake: FakeGitHub
) -> None:
    fake.ghes = True
    client.dispatch.dispatch(WORKFLOW, "main", _inputs("tok-other"), "tok-other")
    run = client.dispatch.dispatch(WORKFLOW, "main", _inputs("tok-2"), "tok-2")
    assert run.found_by == "run-name token"
    assert fake.runs[run.run_id].inputs["token"] == "tok-2"
    sent = [r for r in fake.requests if r["path"].endswith("/dispatches")]
    assert [(r["status"], "return_run_details" in r["body"]) for r in sent[-2:]] == [
        (422, True),
        (204, False),
    ]


def test_an_invalid_input_is_refused_and_no_run_is_created(
    client: RepositoryClient, fake: FakeGitHub
) -> None:
    with pytest.raises(Unprocessable, match="not in the list of allowed values"):
        client.dispatch.dispatch(WORKFLOW, "main", _inputs("tok-3", stage="deploy"), "tok-3")
    assert fake.runs == {}


def test_more_than_25_inputs_are_refused_before_sending(client: RepositoryClient) -> None:
    with pytest.raises(ValueError, match="at most 25 inputs"):
        client.dispatch.dispatch(WORKFLOW, "main", {f"i{n}": "x" for n in range(26)}, "t")


def test_runs_and_jobs_follow_the_run_through_its_life(
    client: RepositoryClient, fake: FakeGitHub, repo: Repository
) -> None:
    run = client.dispatch.dispatch(WORKFLOW, "main", _inputs("tok-4"), "tok-4")
    assert client.runs.get_run(run.run_id).status == "queued"
    fake.start_run(run.run_id)
    assert [j.status for j in client.runs.list_jobs(run.run_id)] == ["in_progress"]
    fake.complete_run(run.run_id, "failure")
    seen = client.runs.get_run(run.run_id)
    assert (seen.status, seen.conclusion, seen.run_attempt) == ("completed", "failure", 1)
    listed = client.runs.list_runs(WORKFLOW, branch="main", event="workflow_dispatch")
    assert [r.id for r in listed] == [run.run_id]
    assert client.runs.list_runs(WORKFLOW, branch="roadmap-x") == []
