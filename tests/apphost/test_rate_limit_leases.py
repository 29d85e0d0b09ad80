"""A GitHub rate limit longer than an effect's lease puts the effect back until
the limit resets, instead of sleeping through the lease while another executor
takes the same effect and performs it a second time."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import pytest

from app.apphost import api
from app.apphost.executor import Executor, HostConfig
from app.apphost.runs import RunKey
from app.apphost.step import decide_step
from app.core.config import RunConfig
from app.core.inputs import StartRun
from app.github.auth import AppCredentials, TokenCache
from app.github.client import GitHubApp
from app.github.retry import RetryPolicy
from app.github.timing import Sleeper
from app.store import Store
from tests.apphost.harness import REPO, sample_files
from tests.fakegithub import FakeGitHub, faults
from tests.support import FakeClock

ROADMAP = "# Roadmap\n\n- [ ] 1.1. Add a greeting\n"
DISPATCH = ("POST", "/repos/{owner}/{repo}/actions/workflows/{workflow_id}/dispatches")
LEASE = 120.0
LIMIT = 600  # a ten-minute primary rate limit


@dataclass
class ConcurrentSleeper:
    """A wait moves GitHub's and the store's clocks, and while the waiting
    executor sleeps, the other executors run (as other processes would)."""

    clock: FakeClock
    fake: FakeGitHub
    meanwhile: list[Callable[[], object]] = field(default_factory=list)
    waits: list[float] = field(default_factory=list)

    def sleep(self, seconds: float) -> None:
        self.waits.append(seconds)
        self.clock.advance(seconds)
        self.fake.advance(seconds)
        for other in list(self.meanwhile):
            other()


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(time.time())  # real time: installation tokens carry real expiry dates


@pytest.fixture
def store(tmp_path: Path, clock: FakeClock) -> Iterator[Store]:
    s = Store.open(f"sqlite:///{tmp_path / 'odw.sqlite3'}", clock=clock)
    yield s
    s.close()


def _executor(
    store: Store, fake: FakeGitHub, clock: FakeClock, sleeper: Sleeper, data: Path
) -> Executor:
    github = GitHubApp(
        AppCredentials(fake.app_id, fake.private_key_pem),
        fake.api_url,
        tokens=TokenCache(clock),
        policy=RetryPolicy(jitter=lambda: 1.0),
        clock=clock,
        sleeper=sleeper,
    )
    config = HostConfig(data_dir=data, retry_base_seconds=0.01, lease_seconds=LEASE)
    return Executor(store, github, config)


def test_a_ten_minute_rate_limit_puts_the_effect_back_and_it_is_performed_once_after_the_reset(
    store: Store, fake: FakeGitHub, clock: FakeClock, tmp_path: Path
) -> None:
    repo = fake.create_repository(REPO, sample_files(ROADMAP))
    installation = fake.install("octo", [REPO])
    run_id = "gh-octo-demo-main-1"
    key = RunKey(installation.id, REPO, "main")
    start = StartRun(
        at=datetime.now(UTC), run_id=run_id, roadmap=ROADMAP, config=RunConfig(maxParallel=1)
    )
    main = repo.git.sha("refs/heads/main")
    decide_step(store, run_id, start, api.tokens, meta={"key": key.to_json(), "sha": main})
    sleeper = ConcurrentSleeper(clock, fake)
    first = _executor(store, fake, clock, sleeper, tmp_path / "one")
    second = _executor(store, fake, clock, ConcurrentSleeper(clock, fake), tmp_path / "two")
    sleeper.meanwhile.append(lambda: second.run_once(kinds=["dispatch-stage"]))
    reset = int(clock.now()) + LIMIT
    fake.inject(*DISPATCH, faults.primary_limit(reset))

    assert first.run_once(kinds=["dispatch-stage"]) == 1
    assert fake.runs == {}, "dispatched during the limit (by both executors, if two runs)"

    (entry,) = [e for e in store.outbox.list(run_id=run_id) if e.kind == "dispatch-stage"]
    assert (entry.status, entry.next_attempt_at >= reset - 1) == ("pending", True), entry
    assert "primary rate limit" in (entry.last_error or "")
    assert sleeper.waits == [], "a wait longer than the lease was slept"
    clock.advance(LEASE + 1)
    fake.advance(LEASE + 1)
    assert second.run_once(kinds=["dispatch-stage"]) == 0, "taken again before the reset"

    clock.advance(LIMIT - LEASE)
    fake.advance(LIMIT - LEASE)
    assert second.run_once(kinds=["dispatch-stage"]) == 1
    done = store.outbox.get(entry.key)
    assert done is not None and done.status == "done", done
    (run,) = fake.runs.values()  # performed once: one workflow run
    assert run.created_at >= reset
    sent = [r["status"] for r in fake.requests if r["path"].endswith("/dispatches")]
    assert sent == [403, 200]
