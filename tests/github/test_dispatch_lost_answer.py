"""A dispatch whose answer is lost after GitHub created the run is not sent again
while its run may still be missing from the run lists (GitHub lists a new run
seconds after it exists: the fake's `run_visible_after`)."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from app.github import GitHubError
from app.github.client import RepositoryClient
from app.github.protocols import DispatchedRun
from tests.fakegithub import FakeGitHub, faults
from tests.github.conftest import RecordingSleeper
from tests.support import FakeClock

WORKFLOW = "odw-stage.yml"
DISPATCH = ("POST", "/repos/{owner}/{repo}/actions/workflows/{workflow_id}/dispatches")


@dataclass
class SharedTimeSleeper(RecordingSleeper):
    """A wait of the client is a wait GitHub sees too: both clocks move."""

    fake: FakeGitHub | None = None

    def sleep(self, seconds: float) -> None:
        super().sleep(seconds)
        assert self.fake is not None
        self.fake.advance(seconds)


@pytest.fixture
def sleeper(clock: FakeClock, fake: FakeGitHub) -> RecordingSleeper:
    return SharedTimeSleeper(clock, fake=fake)


def _find(client: RepositoryClient, fake: FakeGitHub, token: str) -> DispatchedRun | None:
    for run in client.runs.list_runs(WORKFLOW, branch="main", event="workflow_dispatch"):
        if fake.runs[run.id].inputs["token"] == token:
            return DispatchedRun(run.id, run.html_url, "resolved")
    return None


def _inputs(token: str) -> dict[str, str]:
    return {"stage": "plan", "task": "1.1", "token": token}


@pytest.mark.parametrize("ghes", [False, True], ids=["github-com", "ghes"])
def test_a_lost_dispatch_answer_with_a_listing_delay_makes_exactly_one_run(
    client: RepositoryClient, fake: FakeGitHub, ghes: bool
) -> None:
    fake.ghes = ghes
    fake.run_visible_after = 8.0
    if ghes:  # the first send (with return_run_details) is refused; the second is lost
        fake.inject(*DISPATCH, faults.Fault(0))
    fake.inject(*DISPATCH, faults.server_error_after_write(502))
    run = client.dispatch.dispatch(
        WORKFLOW, "main", _inputs("tok-lost"), lambda: _find(client, fake, "tok-lost")
    )
    assert list(fake.runs) == [run.run_id], "the dispatch was sent again: two runs"
    assert run.found_by == "resolved"
    created = [r for r in fake.requests if r["path"].endswith("/dispatches") and r["status"] != 422]
    assert [r["status"] for r in created] == [502]


def test_a_lost_dispatch_answer_whose_run_never_shows_is_sent_again(
    client: RepositoryClient, fake: FakeGitHub, sleeper: RecordingSleeper
) -> None:
    """The look is bounded: a 5xx that created nothing is sent again after it."""
    fake.inject(*DISPATCH, faults.server_error(502))
    run = client.dispatch.dispatch(
        WORKFLOW, "main", _inputs("tok-none"), lambda: _find(client, fake, "tok-none")
    )
    assert list(fake.runs) == [run.run_id]
    assert run.found_by == "return_run_details"
    assert 0 < sum(sleeper.waits) < 60


def test_a_lost_dispatch_answer_without_a_rule_to_find_its_run_is_not_sent_twice(
    client: RepositoryClient, fake: FakeGitHub
) -> None:
    fake.inject(*DISPATCH, faults.server_error_after_write(502))
    with pytest.raises(GitHubError, match="502"):
        client.dispatch.dispatch(WORKFLOW, "main", _inputs("tok-blind"))
    assert len(fake.runs) == 1
