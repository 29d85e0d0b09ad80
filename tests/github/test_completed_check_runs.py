"""A completed check run stays completed: the fake refuses, as GitHub does not
allow, a PATCH that moves its status or conclusion (`tests/fakegithub/checkruns.py`
cites where this is learned), and still takes new output for it."""

from __future__ import annotations

from typing import Any

import pytest

from app.github import Unprocessable
from app.github.client import RepositoryClient
from app.github.protocols import CheckRunFields
from tests.fakegithub import FakeGitHub, faults
from tests.fakegithub.state import Repository


@pytest.mark.parametrize(
    "move",
    [
        {"status": "in_progress"},
        {"status": "queued"},
        {"conclusion": "success"},
        {"status": "completed", "conclusion": "neutral"},
    ],
    ids=["to-in-progress", "to-queued", "new-conclusion", "completed-again-otherwise"],
)
def test_a_completed_check_run_cannot_move_back_or_change_its_conclusion(
    client: RepositoryClient, fake: FakeGitHub, repo: Repository, move: dict[str, Any]
) -> None:
    sha = repo.git.sha("refs/heads/main")
    assert sha
    run = client.checks.create_check_run(
        "ODW · 1.1", sha, CheckRunFields(status="in_progress", title="t", summary="s")
    )
    client.checks.update_check_run(run.id, CheckRunFields(conclusion="failure"))
    held = fake.check_runs[run.id]
    assert (held.status, held.conclusion) == ("completed", "failure")
    with pytest.raises(Unprocessable, match="a completed check run cannot change its"):
        client.checks.update_check_run(run.id, CheckRunFields(**move, title="again", summary="s"))
    assert (held.status, held.conclusion, held.output["title"]) == ("completed", "failure", "t")


def test_a_completed_check_run_still_takes_new_output(
    client: RepositoryClient, fake: FakeGitHub, repo: Repository
) -> None:
    sha = repo.git.sha("refs/heads/main")
    assert sha
    run = client.checks.create_check_run(
        "ODW · 1.1", sha, CheckRunFields(conclusion="success", title="t", summary="s")
    )
    client.checks.update_check_run(run.id, CheckRunFields(title="landed", summary="s2"))
    client.checks.update_check_run(run.id, CheckRunFields(conclusion="success"))
    held = fake.check_runs[run.id]
    assert (held.status, held.conclusion) == ("completed", "success")
    assert held.output["title"] == "landed"
    assert held.patched_when_completed == [
        {"output": {"title": "landed", "summary": "s2"}},
        {"conclusion": "success"},
    ]


@pytest.mark.parametrize("written", [True, False], ids=["answer-lost", "request-lost"])
def test_a_new_check_run_whose_answer_is_lost_is_not_taken_for_the_one_it_replaces(
    client: RepositoryClient, fake: FakeGitHub, repo: Repository, written: bool
) -> None:
    """Same name, head and external id as the completed one it follows: a 5xx
    answer is re-read, and only a check run other than the replaced one counts."""
    sha = repo.git.sha("refs/heads/main")
    assert sha
    fields = CheckRunFields(status="in_progress", title="t", summary="s", external_id="r/1.1")
    old = client.checks.create_check_run("ODW · 1.1", sha, fields)
    client.checks.update_check_run(old.id, CheckRunFields(conclusion="failure"))
    fault = faults.server_error_after_write() if written else faults.server_error()
    fake.inject("POST", "/repos/{owner}/{repo}/check-runs", fault)
    new = client.checks.create_check_run("ODW · 1.1", sha, fields, replacing=old.id)
    assert new.id != old.id and new.status == "in_progress"
    assert sorted(fake.check_runs) == [old.id, new.id]
