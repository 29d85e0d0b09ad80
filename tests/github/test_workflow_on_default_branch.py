"""GitHub knows a workflow for dispatch from the default branch's tree and runs
the copy on the dispatched ref; the fake answers as GitHub does."""

from __future__ import annotations

import pytest

from app.github import NotFound, Unprocessable
from app.github.client import RepositoryClient
from tests.fakegithub import FakeGitHub
from tests.fakegithub.state import Repository
from tests.github.conftest import FILES, STAGE_WORKFLOW

WORKFLOW = "odw-stage.yml"
PATH = f".github/workflows/{WORKFLOW}"
INPUTS = {"stage": "plan", "task": "1.1", "token": "t-1"}


def test_a_workflow_only_on_another_branch_is_unknown_and_cannot_be_dispatched(
    client: RepositoryClient, fake: FakeGitHub, repo: Repository
) -> None:
    main = repo.git.sha("refs/heads/main")
    other = STAGE_WORKFLOW.replace("ODW stage", "Other")
    repo.git.commit_files("feature", {".github/workflows/other.yml": other}, "other", parent=main)
    assert client.runs.knows_workflow(WORKFLOW)
    assert not client.runs.knows_workflow("other.yml")
    with pytest.raises(NotFound):
        client.dispatch.dispatch("other.yml", "feature", INPUTS)
    assert fake.runs == {}


def test_the_dispatched_refs_copy_runs_and_a_ref_without_the_file_is_refused(
    client: RepositoryClient, fake: FakeGitHub, repo: Repository
) -> None:
    renamed = STAGE_WORKFLOW.replace("odw ${{ inputs.stage }}", "next ${{ inputs.stage }}")
    repo.git.commit_files("next", {**FILES, PATH: renamed}, "next", parent=None)
    run = client.dispatch.dispatch(WORKFLOW, "next", INPUTS)
    assert client.runs.get_run(run.run_id).display_title.startswith("next plan")
    bare = {k: v for k, v in FILES.items() if k != PATH}
    repo.git.commit_files("bare", bare, "bare", parent=None)
    with pytest.raises(Unprocessable, match="workflow_dispatch"):
        client.dispatch.dispatch(WORKFLOW, "bare", INPUTS)
    assert list(fake.runs) == [run.run_id]
