"""A wait GitHub asks for is slept in place only when it ends before the time
the caller may hold its work (`Context.waits_end_by`, an outbox effect's
lease); a longer one raises `RetryLater` at once, before anything is resent."""

from __future__ import annotations

import pytest

from app.github.client import RepositoryClient
from app.github.errors import RetryLater
from app.github.protocols import CheckRunFields
from tests.fakegithub import FakeGitHub, faults
from tests.github.conftest import RecordingSleeper
from tests.support import FakeClock

REPO_GET = ("GET", "/repos/{owner}/{repo}")


def _reads(fake: FakeGitHub) -> list[int]:
    return [r["status"] for r in fake.requests if r["path"] == "/repos/octo/demo"]


def test_a_rate_limit_past_the_deadline_raises_retry_later_without_sleeping(
    client: RepositoryClient, fake: FakeGitHub, clock: FakeClock, sleeper: RecordingSleeper
) -> None:
    fake.inject(*REPO_GET, faults.primary_limit(int(clock.now()) + 600))
    with client.context.waits_end_by(60), pytest.raises(RetryLater) as later:
        client.contents.default_branch()
    assert 598 <= later.value.retry_after <= 600
    assert "primary rate limit" in str(later.value)
    assert sleeper.waits == [] and _reads(fake) == [403]


def test_a_short_wait_inside_the_deadline_is_slept_in_place(
    client: RepositoryClient, fake: FakeGitHub, sleeper: RecordingSleeper
) -> None:
    fake.inject(*REPO_GET, faults.secondary_limit(retry_after=3))
    with client.context.waits_end_by(60):
        assert client.contents.default_branch() == "main"
    assert sleeper.waits == [3.0] and _reads(fake) == [403, 200]


def test_without_a_deadline_a_long_limit_is_waited_out(
    client: RepositoryClient, fake: FakeGitHub, clock: FakeClock, sleeper: RecordingSleeper
) -> None:
    """Outside an effect (the command line) nothing else would take the work."""
    fake.inject(*REPO_GET, faults.primary_limit(int(clock.now()) + 600))
    assert client.contents.default_branch() == "main"
    assert 598 <= sum(sleeper.waits) <= 600


def test_the_content_budget_does_not_wait_past_the_deadline(
    client: RepositoryClient, sleeper: RecordingSleeper
) -> None:
    budget = client.context.budget
    for _ in range(80):  # GitHub's 80 content-creating requests a minute
        budget.acquire(client.installation_id)
    with client.context.waits_end_by(30), pytest.raises(RetryLater, match="content-creation"):
        client.checks.create_check_run("x", "0" * 40, CheckRunFields(status="queued"))
    assert sleeper.waits == []
