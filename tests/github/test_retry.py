"""The one retry layer, on an injected clock: no real sleeps."""

from __future__ import annotations

import pytest

from app.github import (
    GitHubUnavailable,
    NotFound,
    RateLimited,
    Unprocessable,
    WriteOutcomeUnknown,
)
from app.github.client import RepositoryClient
from app.github.protocols import CheckRunFields
from tests.fakegithub import FakeGitHub, faults
from tests.fakegithub.state import Repository
from tests.github.conftest import RecordingSleeper
from tests.support import FakeClock

GET_REF = ("GET", "/repos/{owner}/{repo}/git/ref/{ref}")
CREATE_CHECK = ("POST", "/repos/{owner}/{repo}/check-runs")


def _sent(fake: FakeGitHub, suffix: str, method: str = "GET") -> int:
    return sum(1 for r in fake.requests if r["method"] == method and r["path"].endswith(suffix))


@pytest.mark.parametrize("status", [403, 429], ids=["403", "429"])
def test_a_primary_rate_limit_waits_until_the_reset(
    client: RepositoryClient,
    fake: FakeGitHub,
    clock: FakeClock,
    sleeper: RecordingSleeper,
    status: int,
) -> None:
    client.contents.branch_sha("main")  # token minted before the clock is read
    reset = int(clock.now()) + 1234
    fake.inject(*GET_REF, faults.primary_limit(reset, status))
    assert client.contents.branch_sha("main")
    assert sleeper.waits == [pytest.approx(reset - (clock.now() - sleeper.waits[0]))]
    assert clock.now() >= reset
    assert _sent(fake, "/git/ref/heads/main") == 3


def test_a_secondary_limit_obeys_retry_after(
    client: RepositoryClient, fake: FakeGitHub, sleeper: RecordingSleeper
) -> None:
    fake.inject(*GET_REF, faults.secondary_limit(retry_after=3))
    assert client.contents.branch_sha("main")
    assert sleeper.waits == [3.0]


def test_a_secondary_limit_without_retry_after_waits_a_minute_then_longer(
    client: RepositoryClient, fake: FakeGitHub, sleeper: RecordingSleeper
) -> None:
    fake.inject(*GET_REF, faults.secondary_limit(retry_after=None), times=2)
    assert client.contents.branch_sha("main")
    assert sleeper.waits == [60.0, 120.0]


def test_502_twice_then_200_succeeds_with_two_retries(
    client: RepositoryClient, fake: FakeGitHub, sleeper: RecordingSleeper
) -> None:
    fake.inject(*GET_REF, faults.server_error(502), times=2)
    assert client.contents.branch_sha("main")
    assert _sent(fake, "/git/ref/heads/main") == 3
    assert sleeper.waits == [1.0, 2.0]  # exponential; jitter pinned to its maximum


def test_server_errors_give_up_after_the_cap_with_a_typed_error(
    client: RepositoryClient, fake: FakeGitHub, sleeper: RecordingSleeper
) -> None:
    fake.inject(*GET_REF, faults.server_error(500), times=20)
    with pytest.raises(GitHubUnavailable, match=r"refs\.get"):
        client.contents.branch_sha("main")
    assert _sent(fake, "/git/ref/heads/main") == 6
    assert max(sleeper.waits) <= 60


def test_a_rate_limit_reset_too_far_away_is_not_waited_for(
    client: RepositoryClient, fake: FakeGitHub, clock: FakeClock, sleeper: RecordingSleeper
) -> None:
    fake.inject(*GET_REF, faults.primary_limit(int(clock.now()) + 86_400))
    with pytest.raises(RateLimited):
        client.contents.branch_sha("main")
    assert sleeper.waits == []


@pytest.mark.parametrize(
    ("fault", "error"),
    [
        (faults.Fault(404, body={"message": "Not Found"}), NotFound),
        (faults.Fault(422, body={"message": "Validation Failed"}), Unprocessable),
    ],
    ids=["404", "422"],
)
def test_non_transient_errors_are_tried_once(
    client: RepositoryClient,
    fake: FakeGitHub,
    repo: Repository,
    sleeper: RecordingSleeper,
    fault: faults.Fault,
    error: type[Exception],
) -> None:
    sha = repo.git.sha("refs/heads/main") or ""
    fake.inject(*CREATE_CHECK, fault)
    with pytest.raises(error, match=r"checks\.create"):
        client.checks.create_check_run("ODW · 1.1", sha, CheckRunFields(status="queued"))
    assert _sent(fake, "/check-runs", "POST") == 1
    assert sleeper.waits == []


def test_a_create_that_failed_with_502_is_reread_before_it_is_sent_again(
    client: RepositoryClient, fake: FakeGitHub, repo: Repository
) -> None:
    sha = repo.git.sha("refs/heads/main") or ""
    fake.inject(*CREATE_CHECK, faults.server_error(502))
    fields = CheckRunFields(status="queued", external_id="run=1;task=1.1;attempt=1")
    created = client.checks.create_check_run("ODW · 1.1", sha, fields)
    assert _sent(fake, f"/commits/{sha}/check-runs") == 1  # looked before sending again
    assert [r.id for r in fake.check_runs.values()] == [created.id]


def test_a_create_that_timed_out_after_reaching_github_is_not_repeated(
    app_with_short_timeout: RepositoryClient, fake: FakeGitHub, repo: Repository
) -> None:
    client = app_with_short_timeout
    sha = repo.git.sha("refs/heads/main") or ""
    client.checks.check_runs_for_ref(sha)  # mint the token first
    fields = CheckRunFields(status="queued", external_id="run=1;task=1.1;attempt=1")
    fake.inject(*CREATE_CHECK, faults.delay(2.5))
    created = client.checks.create_check_run("ODW · 1.1", sha, fields)
    fake.idle()
    assert _sent(fake, "/check-runs", "POST") == 1
    assert _sent(fake, f"/commits/{sha}/check-runs") == 2  # the re-read found it
    assert list(fake.check_runs) == [created.id]


@pytest.fixture
def app_with_short_timeout(client: RepositoryClient) -> RepositoryClient:
    client.context.timeout = 1
    return client


def test_a_refused_token_is_dropped_and_the_next_call_mints_another(
    client: RepositoryClient, fake: FakeGitHub
) -> None:
    client.contents.branch_sha("main")
    fake.tokens.clear()  # GitHub revoked every token
    with pytest.raises(Exception, match="401"):
        client.contents.branch_sha("main")
    assert client.contents.branch_sha("main")
    assert fake.token_requests() == 2


def test_a_create_that_cannot_be_reread_is_reported_not_repeated(
    app_with_short_timeout: RepositoryClient, fake: FakeGitHub, repo: Repository
) -> None:
    client = app_with_short_timeout
    sha = repo.git.sha("refs/heads/main") or ""
    client.checks.check_runs_for_ref(sha)
    fake.inject(*CREATE_CHECK, faults.delay(2.5))
    with pytest.raises(WriteOutcomeUnknown, match=r"checks\.create"):
        client.checks.create_check_run("ODW · 1.1", sha, CheckRunFields(status="queued"))
    fake.idle()
    assert _sent(fake, "/check-runs", "POST") == 1


def test_a_merge_whose_answer_was_lost_is_found_merged_on_reread_not_sent_again(
    app_with_short_timeout: RepositoryClient, fake: FakeGitHub, repo: Repository
) -> None:
    client = app_with_short_timeout
    base = repo.git.sha("refs/heads/main") or ""
    head = repo.git.commit_files("roadmap-1-1", {"f": "1"}, "work", parent=base)
    pull = client.pulls.create_pull("roadmap-1-1", "main", "1.1", "b", draft=False)
    fake.inject("PUT", "/repos/{owner}/{repo}/pulls/{pull_number}/merge", faults.delay(2.5))
    result = client.pulls.merge_pull(pull.number, head)
    fake.idle()
    assert result.merged and result.sha == repo.git.sha("refs/heads/main")
    assert _sent(fake, "/merge", "PUT") == 1
