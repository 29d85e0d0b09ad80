"""A retried task and a resumed run get new check runs; the completed ones stay
as they ended (GitHub never reopens a completed check run:
`tests/fakegithub/checkruns.py`). The real `ViewSync` writes, over the real
client, to the fake GitHub, which refuses a PATCH that would reopen one."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.apphost import views
from app.apphost.judged import Judged
from app.apphost.sync import RUN, ViewSync
from app.core.ownership import task_check_id
from app.core.verdict import Verdict
from app.github import GitHubApp
from app.github.auth import AppCredentials, TokenCache
from app.github.client import RepositoryClient
from app.store import Store
from tests.core.runkit import Run
from tests.fakegithub import FakeGitHub
from tests.fakegithub import state as s
from tests.fakegithub.checkruns import reopening_patches
from tests.github.conftest import FILES, REPO
from tests.support import FakeClock

ROADMAP = "# R\n\n- [ ] 1.1. Only\n"


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
def store(tmp_path: Path) -> Iterator[Store]:
    opened = Store.open(f"sqlite:///{tmp_path / 'odw.sqlite3'}")
    try:
        yield opened
    finally:
        opened.close()


def syncer(store: Store, client: RepositoryClient, fake: FakeGitHub, judged: Judged) -> ViewSync:
    sha = fake.repos[REPO].git.sha("refs/heads/main")
    assert sha
    return ViewSync(store, client, "r", sha, fake.bot_login, judged=judged)


def branch_head(fake: FakeGitHub) -> Judged:
    """1.1's branch with a commit of its own, as its plan stage left it (a passed
    plan verdict naming the head): a task's check runs sit on that head, never
    on the base commit."""
    git = fake.repos[REPO].git
    head = git.commit_files(
        "roadmap-1-1", {"docs/execplans/1-1.md": "# 1.1\n"}, "plan", git.sha("refs/heads/main")
    )
    verdict = Verdict(
        stage="plan", task="1.1", token="t" * 16, passed=True, checks=[], head_after=head
    )
    return Judged(latest={"1.1": verdict})


def named(fake: FakeGitHub, name: str) -> list[s.CheckRun]:
    return sorted((c for c in fake.check_runs.values() if c.name == name), key=lambda c: c.id)


def test_a_retried_task_and_its_resumed_run_get_new_check_runs(
    fake: FakeGitHub, client: RepositoryClient, store: Store, tmp_path: Path
) -> None:
    run = Run(ROADMAP, stage_attempts=1)
    judged = branch_head(fake)
    head = judged.latest["1.1"].head_after
    sync = syncer(store, client, fake, judged)
    sync.sync(run.state)
    run.finish("1.1", "exit:1")  # the task fails; the run stops, waiting for a person
    sync.sync(run.state)
    [failed] = named(fake, "ODW · 1.1")
    [stopped] = named(fake, views.RUN_CHECK)
    assert (failed.status, failed.conclusion) == ("completed", "failure")
    assert (stopped.status, stopped.conclusion) == ("completed", "action_required")
    # A product failure with a kept branch: Continue (recover) first, then Start over.
    assert [a["identifier"] for a in failed.actions][:2] == ["recover", "retry"]

    run.move("retry", "1.1")
    sync.sync(run.state)
    first, second = named(fake, "ODW · 1.1")
    assert (first.id, first.status, first.conclusion) == (failed.id, "completed", "failure")
    assert (second.status, second.conclusion) == ("in_progress", None)
    assert second.head_sha == first.head_sha == head
    # The click's check (`ownership.foreign_click`) holds on the new check run too.
    assert second.external_id == first.external_id == task_check_id("r", "1.1")
    old_run, new_run = named(fake, views.RUN_CHECK)
    assert (old_run.status, old_run.conclusion) == ("completed", "action_required")
    assert (new_run.status, new_run.external_id) == ("in_progress", old_run.external_id)
    # Links (status comment, PR body, command replies) point to the newest.
    handles = store.projections.tasks("r")
    assert handles["1.1"]["checkUrl"].endswith(f"/runs/{second.id}")
    assert handles[RUN]["runUrl"].endswith(f"/runs/{new_run.id}")

    run.finish("1.1", "exit:1")  # fails again: the new check run completes, with buttons
    sync.sync(run.state)
    assert len(named(fake, "ODW · 1.1")) == 2
    assert (second.status, second.conclusion) == ("completed", "failure")
    assert [a["identifier"] for a in second.actions][:2] == ["recover", "retry"]
    assert reopening_patches(fake.check_runs.values()) == []


def test_a_sync_taken_over_after_a_crash_finds_the_new_check_run_it_did_not_save(
    fake: FakeGitHub, client: RepositoryClient, store: Store, tmp_path: Path
) -> None:
    run = Run(ROADMAP, stage_attempts=1)
    judged = branch_head(fake)
    sync = syncer(store, client, fake, judged)
    run.finish("1.1", "exit:1")
    sync.sync(run.state)
    before = dict(store.projections.tasks("r")["1.1"])
    run.move("retry", "1.1")
    sync.sync(run.state)
    # The executor died after creating the new check run, before saving its id.
    store.projections.merge_task("r", "1.1", {**before, "checkDigest": "lost"})
    run.finish("1.1", "exit:1")
    again = syncer(store, client, fake, judged)
    again.again = True
    again.sync(run.state)
    first, second = named(fake, "ODW · 1.1")
    assert (first.conclusion, second.conclusion) == ("failure", "failure")
    assert store.projections.tasks("r")["1.1"]["checkId"] == second.id
    assert reopening_patches(fake.check_runs.values()) == []


class Died(BaseException):
    """The process dying: nothing after the request that reached GitHub runs."""


@pytest.mark.parametrize(
    ("part", "method"),
    [("checks", "create_check_run"), ("comments", "create_comment")],
    ids=["check-run", "status-comment"],
)
def test_a_sync_that_died_after_creating_before_saving_is_not_repeated_by_the_next(
    fake: FakeGitHub,
    client: RepositoryClient,
    store: Store,
    monkeypatch: pytest.MonkeyPatch,
    part: str,
    method: str,
) -> None:
    """The next sync may run in another process that was never told of the
    crash (its entry is new, not claimed again): what the dead one said it was
    creating is looked up before anything is created."""
    run = Run(ROADMAP, stage_attempts=1)
    judged = branch_head(fake)
    real = getattr(getattr(client, part), method)

    def request_then_die(*args: object, **kwargs: object) -> None:
        real(*args, **kwargs)
        raise Died

    with monkeypatch.context() as m:
        m.setattr(getattr(client, part), method, request_then_die)
        with pytest.raises(Died):
            syncer(store, client, fake, judged).sync(run.state)
    run.finish("1.1", "pass")
    syncer(store, client, fake, judged).sync(run.state)
    [check] = named(fake, "ODW · 1.1")
    assert len(named(fake, views.RUN_CHECK)) == 1
    saved = store.projections.tasks("r")["1.1"]
    assert saved["checkId"] == check.id
    [comment] = [c for c in fake.comments.values() if c.number == saved["pull"]]
    assert saved["comment"] == comment.id
