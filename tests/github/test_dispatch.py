"""Stage dispatch with `return_run_details`, and GHES without it."""

from __future__ import annotations

import pytest

from app.apphost.adapters import ActionsStages
from app.core.effects import DispatchStage
from app.github import GitHubError, Unprocessable
from app.github.client import RepositoryClient
from app.github.protocols import DispatchedRun
from tests.fakegithub import FakeGitHub
from tests.fakegithub.server import Reply
from tests.fakegithub.state import Repository

WORKFLOW = "odw-stage.yml"


def _inputs(token: str, stage: str = "plan") -> dict[str, str]:
    return {"stage": stage, "task": "1.1", "token": token}


def test_a_dispatch_learns_its_run_from_return_run_details(
    client: RepositoryClient, fake: FakeGitHub
) -> None:
    asked: list[str] = []
    run = client.dispatch.dispatch(
        WORKFLOW, "main", _inputs("tok-1"), lambda: asked.append("find") or None
    )
    assert run.found_by == "return_run_details"
    assert asked == []  # GitHub named the run: nothing is looked for
    held = fake.runs[run.run_id]
    assert (held.inputs, held.ref, held.event) == (_inputs("tok-1"), "main", "workflow_dispatch")
    sent = [r for r in fake.requests if r["path"].endswith("/dispatches")]
    assert [r["body"]["return_run_details"] for r in sent] == [True]
    assert client.runs.get_run(run.run_id).display_title == "odw plan 1.1 [tok-1]"


def test_ghes_without_return_run_details_takes_the_run_the_callers_rule_finds(
    client: RepositoryClient, fake: FakeGitHub
) -> None:
    """GHES answers 204 with no id: the caller's `find` is asked until it names a
    run (the rule of which run is the dispatch's belongs to the caller)."""
    fake.ghes = True

    def find(token: str) -> DispatchedRun | None:
        for run in client.runs.list_runs(WORKFLOW, branch="main", event="workflow_dispatch"):
            if fake.runs[run.id].inputs["token"] == token:
                return DispatchedRun(run.id, run.html_url, "resolved")
        return None

    client.dispatch.dispatch(WORKFLOW, "main", _inputs("tok-other"), lambda: find("tok-other"))
    run = client.dispatch.dispatch(WORKFLOW, "main", _inputs("tok-2"), lambda: find("tok-2"))
    assert run.found_by == "resolved"
    assert fake.runs[run.run_id].inputs["token"] == "tok-2"
    sent = [r for r in fake.requests if r["path"].endswith("/dispatches")]
    assert [(r["status"], "return_run_details" in r["body"]) for r in sent[-2:]] == [
        (422, True),
        (204, False),
    ]


def test_ghes_dispatch_whose_run_is_never_found_is_an_error(
    client: RepositoryClient, fake: FakeGitHub
) -> None:
    fake.ghes = True
    with pytest.raises(GitHubError, match="its run is not listed"):
        client.dispatch.dispatch(WORKFLOW, "main", _inputs("tok-5"), lambda: None)


def test_an_invalid_input_is_refused_and_no_run_is_created(
    client: RepositoryClient, fake: FakeGitHub
) -> None:
    with pytest.raises(Unprocessable, match="not in the list of allowed values"):
        client.dispatch.dispatch(WORKFLOW, "main", _inputs("tok-3", stage="deploy"))
    assert fake.runs == {}


def test_more_than_25_inputs_are_refused_before_sending(client: RepositoryClient) -> None:
    with pytest.raises(ValueError, match="at most 25 inputs"):
        client.dispatch.dispatch(WORKFLOW, "main", {f"i{n}": "x" for n in range(26)})


def test_runs_and_jobs_follow_the_run_through_its_life(
    client: RepositoryClient, fake: FakeGitHub, repo: Repository
) -> None:
    run = client.dispatch.dispatch(WORKFLOW, "main", _inputs("tok-4"))
    assert client.runs.get_run(run.run_id).status == "queued"
    fake.start_run(run.run_id)
    assert [j.status for j in client.runs.list_jobs(run.run_id)] == ["in_progress"]
    fake.complete_run(run.run_id, "failure")
    seen = client.runs.get_run(run.run_id)
    assert (seen.status, seen.conclusion, seen.run_attempt) == ("completed", "failure", 1)
    listed = client.runs.list_runs(WORKFLOW, branch="main", event="workflow_dispatch")
    assert [r.id for r in listed] == [run.run_id]
    assert client.runs.list_runs(WORKFLOW, branch="roadmap-x") == []


def test_a_run_shows_who_started_it_its_workflow_path_and_head_repository(
    client: RepositoryClient, fake: FakeGitHub
) -> None:
    ours = client.runs.get_run(client.dispatch.dispatch(WORKFLOW, "main", _inputs("t-5")).run_id)
    assert (ours.triggering_actor, ours.head_repository) == (fake.bot_login, "octo/demo")
    assert ours.path == f".github/workflows/{WORKFLOW}@main"
    assert ours.created_at is not None and abs(ours.created_at - fake.now()) < 60
    fake.add_collaborator("octo/demo", "wanda", "write")
    theirs = fake.dispatch_as("wanda", "octo/demo", WORKFLOW, "main", _inputs("t-5"))
    seen = client.runs.get_run(theirs.id)
    assert seen.triggering_actor == "wanda"
    assert seen.display_title == ours.display_title  # a name proves nothing
    fake.complete_run(theirs.id)
    fake.rerun_as("wanda", ours.id)
    again = client.runs.get_run(ours.id)
    assert (again.triggering_actor, again.run_attempt) == ("wanda", 2)


def test_a_reader_cannot_dispatch(fake: FakeGitHub, repo: Repository) -> None:
    fake.add_collaborator("octo/demo", "rita", "read")
    with pytest.raises(Reply) as refused:
        fake.dispatch_as("rita", "octo/demo", WORKFLOW, "main", _inputs("t-6"))
    assert refused.value.status == 403
    assert fake.runs == {}


def test_a_stage_workflow_without_the_tag_input_says_to_run_odw_init_force(
    client: RepositoryClient, fake: FakeGitHub, repo: Repository
) -> None:
    """This fixture's workflow predates `tag`: GitHub refuses the dispatch (422),
    and the error the attempt ends with tells the operator what to do."""
    stages = ActionsStages(client, "run-1", "", tag_key=b"key", bot=fake.bot_login)
    dispatch = DispatchStage(
        key="k", task="1.1", stage="plan", attempt=1, token="t" * 32, branch="main",
        base="main", writes=True, deadline_seconds=60.0,
    )  # fmt: skip
    with pytest.raises(Unprocessable, match=r"Unexpected inputs.*run `odw init --force`"):
        stages.start(dispatch)
    assert fake.runs == {}
