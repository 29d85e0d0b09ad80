"""How often the views write, and who hears of a halted run: the real `ViewSync`
over the real client to the fake GitHub, with the store's clock in the test's hands.

A progress edit (a check run or status comment still in progress) waits until
its change settled and the last write is `EDIT_EVERY` old, and is then one
write showing the newest state; what concludes a view is written at once.
A run halted for a reason no task's notice tells gets one new comment.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.apphost import views
from app.apphost.judged import Judged
from app.apphost.sync import EDIT_EVERY, SETTLE, ViewSync
from app.core.inputs import IntegrationFinished
from app.core.integration import IntegrationReport
from app.github import GitHubApp
from app.github.auth import AppCredentials, TokenCache
from app.github.client import RepositoryClient
from app.store import Store
from tests.apphost.test_check_run_attempts import branch_head, named
from tests.core.runkit import AT, Run
from tests.fakegithub import FakeGitHub
from tests.github.conftest import FILES, REPO
from tests.support import FakeClock

ROADMAP = "# R\n\n- [ ] 1.1. Only\n- [ ] 1.2. Other\n"


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(time.time())


@pytest.fixture
def client(fake: FakeGitHub) -> RepositoryClient:
    fake.create_repository(REPO, FILES)
    installation = fake.install("octo", [REPO])
    app = GitHubApp(
        AppCredentials(fake.app_id, fake.private_key_pem),
        fake.api_url,
        tokens=TokenCache(FakeClock(time.time())),
    )
    return app.repository(installation.id, REPO)


@pytest.fixture
def store(tmp_path: Path, clock: FakeClock) -> Iterator[Store]:
    opened = Store.open(f"sqlite:///{tmp_path / 'odw.sqlite3'}", clock=clock.now)
    try:
        yield opened
    finally:
        opened.close()


def syncer(store: Store, client: RepositoryClient, fake: FakeGitHub, judged: Judged) -> ViewSync:
    sha = fake.repos[REPO].git.sha("refs/heads/main")
    assert sha
    return ViewSync(store, client, "r", sha, fake.bot_login, mention=("maint",), judged=judged)


def patches(fake: FakeGitHub, check_id: int) -> int:
    return sum(
        1
        for r in fake.requests
        if r["method"] == "PATCH" and r["path"].endswith(f"/check-runs/{check_id}")
    )


def test_progress_edits_wait_and_show_the_newest_state_in_one_write(
    fake: FakeGitHub, client: RepositoryClient, store: Store, tmp_path: Path, clock: FakeClock
) -> None:
    run = Run(ROADMAP, maxParallel=1)
    judged = branch_head(fake)
    run.drive_to("1.1", "design-review")
    sync = syncer(store, client, fake, judged)
    sync.sync(run.state)
    [check] = named(fake, "ODW · 1.1")
    assert "design-review" in check.output["title"]

    run.drive_to("1.1", "implement")  # two changes a second apart: neither is written yet
    sync.sync(run.state)
    clock.advance(1.0)
    run.drive_to("1.1", "gates")
    sync.sync(run.state)
    assert patches(fake, check.id) == 0
    assert sync.later is not None and sync.later <= clock.now() + EDIT_EVERY

    clock.advance(EDIT_EVERY + SETTLE)  # the follow-up sync the performer queued for `later`
    sync.later = None
    sync.sync(run.state)
    assert patches(fake, check.id) == 1
    assert "gates" in check.output["title"]
    assert sync.later is None

    for _ in range(10):  # the task fails a second after that write
        if run.status("1.1") != "running":
            break
        run.finish_stage("1.1", "exit:1")
    assert run.status("1.1") == "failed"
    clock.advance(1.0)
    sync.sync(run.state)
    assert named(fake, "ODW · 1.1")[-1].conclusion == "failure"  # a conclusion is never held


def test_a_halt_no_task_tells_posts_one_notice_that_mentions_and_says_what_to_type(
    fake: FakeGitHub, client: RepositoryClient, store: Store, tmp_path: Path, clock: FakeClock
) -> None:
    run = Run(ROADMAP, maxParallel=2, stage_attempts=1)
    judged = branch_head(fake)
    run.drive_to("1.1", "design-review")
    sync = syncer(store, client, fake, judged)
    sync.sync(run.state)  # 1.1's pull request and status comment
    [pull] = [p for p in fake.pulls.values() if p.head == "roadmap-1-1"]
    assert views.halt_notice_key(run.state) is None

    run.finish("1.2", "provider:429")  # the agent's provider refuses: fan-out stops
    assert run.state.stop is not None and run.state.stop.kind == "provider"
    key = views.halt_notice_key(run.state)
    assert key is not None
    sync.sync(run.state)
    clock.advance(EDIT_EVERY + SETTLE)
    sync.sync(run.state)  # once per halt, however often the views sync

    notices = [
        c
        for c in fake.comments.values()
        if c.number == pull.number and views.notice_marker("run", key) in c.body
    ]
    assert len(notices) == 1
    body = notices[0].body
    assert "@maint" in body and "halted" in body
    assert "To go on:" in body and "`ODW · run`" in body


def test_an_operators_own_halt_and_a_task_failure_post_no_run_notice() -> None:
    run = Run(ROADMAP, maxParallel=2, stage_attempts=1)
    run.drive_to("1.1", "implement")
    run.move("halt")
    assert views.halt_notice_key(run.state) is None  # they know: they typed it
    failed = Run(ROADMAP, maxParallel=1, stage_attempts=1)
    failed.finish("1.1", "exit:1")
    assert failed.state.stop is not None
    assert views.halt_notice_key(failed.state) is None  # the task's own notice tells it


def test_a_landing_is_one_request_and_leaves_every_view_as_a_person_expects(
    fake: FakeGitHub, client: RepositoryClient, store: Store, tmp_path: Path, clock: FakeClock
) -> None:
    run = Run("# R\n\n- [ ] 1.1. Only\n", maxParallel=1)
    judged = branch_head(fake)
    run.drive_to("1.1", "design-review")
    sync = syncer(store, client, fake, judged)
    sync.sync(run.state)  # the draft PR, its status comment, the task's and the run's checks
    for _ in range(20):
        if run.state.task("1.1").awaiting == "integrate":
            break
        run.finish_stage("1.1")
    clock.advance(EDIT_EVERY + SETTLE)
    sync.sync(run.state)
    git = fake.repos[REPO].git
    main = git.sha("refs/heads/main")
    assert main
    landed = git.commit_files("main", {"greeting.txt": "hi\n"}, "1.1 (squash)", main)
    run.feed(
        IntegrationFinished(
            at=AT, task="1.1", report=IntegrationReport.landed(sha=landed, attempts=1)
        )
    )
    [old_run] = named(fake, views.RUN_CHECK)

    before = len(fake.requests)
    sync.sync(run.state)
    made = [
        (r["method"], r["path"].split("/repos/octo/demo")[-1])
        for r in fake.requests[before:]
        if "access_tokens" not in r["path"]
    ]
    # The run check's new head is a create; everything else is the one GraphQL request.
    assert made == [("POST", "/check-runs"), ("POST", "/api/graphql")], made
    [pull] = [p for p in fake.pulls.values() if p.head == "roadmap-1-1"]
    assert (pull.state, pull.draft) == ("closed", False) and landed[:12] in pull.body
    [status] = [c for c in fake.comments.values() if c.number == pull.number]
    assert f"landed as {landed[:12]}" in status.body
    task_check = named(fake, "ODW · 1.1")[-1]
    assert (task_check.status, task_check.conclusion) == ("completed", "success")
    assert (old_run.status, old_run.conclusion) == ("completed", "neutral")
    new_run = named(fake, views.RUN_CHECK)[-1]
    assert new_run.head_sha == landed and new_run.id != old_run.id

    before = len(fake.requests)
    clock.advance(EDIT_EVERY + SETTLE)
    sync.sync(run.state)  # nothing left to write
    assert [r for r in fake.requests[before:] if "access_tokens" not in r["path"]] == []
