"""A run's GitHub side has one owner at a time: a renewed, fenced lease.

An effect slower than its lease keeps its claim (renewed while it runs), so no
second executor performs it alongside; a syncer that lost the run's lease to
another executor stops at its next save and leaves what its successor saved;
a holder that dies is taken over once its lease runs out.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import pytest
from pydantic import BaseModel

from app.apphost.executor import Executor, HostConfig
from app.apphost.performers.base import HostContext
from app.apphost.performers.table import PERFORMERS, Row
from app.apphost.runs import run_lease
from app.github.auth import AppCredentials
from app.github.client import GitHubApp, RepositoryClient
from app.store import LeaseLost, Store
from tests.apphost.test_check_run_attempts import branch_head, named
from tests.apphost.test_view_edits import ROADMAP, syncer
from tests.apphost.test_view_edits import client as client  # a fixture
from tests.core.runkit import Run
from tests.fakegithub import FakeGitHub

SLOW = "test-slow"


class Slow(BaseModel):
    seconds: float


class SlowPerformer:
    """Takes longer than the entry's lease; counts how often it ran."""

    runs: ClassVar[list[float]] = []

    def __init__(self, context: HostContext) -> None:
        self.context = context

    def perform(self, effect: Slow, *, again: bool) -> Any:
        SlowPerformer.runs.append(time.monotonic())
        time.sleep(effect.seconds)
        return {"slept": effect.seconds}

    def gave_up(self, effect: Slow, error: str) -> None:
        raise AssertionError(error)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    # Executors as if on other hosts: a lease is another's until it runs out.
    opened = Store.open(f"sqlite:///{tmp_path / 'odw.sqlite3'}", alive=lambda host, pid: False)
    try:
        yield opened
    finally:
        opened.close()


def executor(store: Store, fake: FakeGitHub, tmp_path: Path, lease: float) -> Executor:
    github = GitHubApp(AppCredentials(fake.app_id, fake.private_key_pem), fake.api_url)
    return Executor(store, github, HostConfig(data_dir=tmp_path / "data", lease_seconds=lease))


def test_an_effect_slower_than_its_lease_is_performed_once(
    store: Store, fake: FakeGitHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(PERFORMERS, SLOW, Row(Slow, SlowPerformer))
    SlowPerformer.runs = []
    lease = 0.4
    store.outbox.enqueue("slow-1", SLOW, {"seconds": lease * 4})
    first, second = (executor(store, fake, tmp_path, lease) for _ in range(2))
    worker = threading.Thread(target=first.run_once)
    worker.start()
    claimed = 0
    while worker.is_alive():  # another executor keeps asking for due work meanwhile
        claimed += second.run_once()
        time.sleep(lease / 4)
    worker.join()
    entry = store.outbox.get("slow-1")
    assert entry is not None and entry.status == "done" and entry.attempts == 1
    assert claimed == 0 and len(SlowPerformer.runs) == 1


def test_a_syncer_that_lost_the_run_stops_at_its_next_save(
    fake: FakeGitHub,
    client: RepositoryClient,
    store: Store,
    tmp_path: Path,
) -> None:
    run = Run(ROADMAP, maxParallel=1)
    judged = branch_head(fake)
    run.drive_to("1.1", "design-review")
    stale = store.leases.acquire(run_lease("r"), "executor-a", ttl=0.2)
    assert stale is not None
    time.sleep(0.3)  # it stalled past its lease ...
    taken = store.leases.acquire(run_lease("r"), "executor-b", ttl=30)  # ... and b took the run
    assert taken is not None
    successor = syncer(store, client, fake, judged)
    successor.hold = taken
    successor.sync(run.state)
    saved = store.projections.tasks("r")
    [check] = named(fake, "ODW · 1.1")
    assert saved["1.1"]["checkId"] == check.id

    run.drive_to("1.1", "implement")
    late = syncer(store, client, fake, judged)
    late.hold = stale
    with pytest.raises(LeaseLost):
        late.sync(run.state)
    assert store.projections.tasks("r") == saved  # nothing it did was recorded
