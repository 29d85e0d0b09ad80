"""Runs GitHub refuses or stops: a repository that disallows squash merging under
`integration: pull-request` (refused before anything is dispatched), a
repository renamed under an open run (the run halts saying where it went), and
an installation uninstalled or suspended (its open runs halt with that reason,
told by the webhook or, when that was lost, by GitHub refusing a token)."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from app.apphost import api
from app.apphost.executor import Executor, HostConfig
from app.apphost.runs import RunKey
from app.apphost.step import decide_step, load_state
from app.core.config import RunConfig
from app.core.inputs import StartRun
from app.github.auth import AppCredentials
from app.github.client import GitHubApp
from app.service.handlers import build_router
from app.service.worker import DeliveryWorker, WorkerConfig
from app.store import Store
from tests.apphost.harness import ODW_YML, REPO, ROADMAP, sample_files
from tests.conftest import RunOdw
from tests.fakegithub import FakeGitHub

WORKER = WorkerConfig(lease_seconds=30, max_attempts=3, retry_base_seconds=1, retry_max_seconds=5)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    s = Store.open(f"sqlite:///{tmp_path / 'odw.sqlite3'}")
    yield s
    s.close()


def _executor(store: Store, fake: FakeGitHub, data_dir: Path) -> Executor:
    github = GitHubApp(AppCredentials(fake.app_id, fake.private_key_pem), fake.api_url)
    return Executor(store, github, HostConfig(data_dir=data_dir, retry_base_seconds=0.01))


@pytest.mark.parametrize(
    ("squash", "starts"), [(False, False), (True, True)], ids=["squash-off", "squash-on"]
)
def test_a_pull_request_run_on_a_repository_without_squash_merging_is_refused_with_the_reason(
    store: Store, fake: FakeGitHub, tmp_path: Path, squash: bool, starts: bool
) -> None:
    odw = {**ODW_YML, "integration": "pull-request"}
    repo = fake.create_repository(REPO, sample_files(ROADMAP, odw))
    installation = fake.install("octo", [REPO])
    fake.merge_settings(REPO, squash=squash)
    key = RunKey(installation.id, REPO, "main")
    assert api.request_start(store, key, by="mona")
    executor = _executor(store, fake, tmp_path / "data")
    assert executor.run_once(kinds=["app-start"]) == 1
    (entry,) = [e for e in store.outbox.list() if e.kind == "app-start"]
    runs = [v for v in store.projections.runs() if "key" in v.data]
    config = [c for c in fake.check_runs.values() if c.name == "ODW · config"]
    if starts:
        assert entry.result.get("started") is True and len(runs) == 1, entry
        assert not config
        return
    assert entry.status == "done" and "does not allow squash merging" in entry.result["refused"]
    assert not runs and not fake.runs  # nothing started, nothing dispatched
    (check,) = config
    assert check.conclusion == "failure" and check.head_sha == repo.git.sha("refs/heads/main")
    assert "integration" in check.output["summary"]
    assert "Allow squash merging" in check.output["summary"]


def _drain(executor: Executor, kinds: list[str]) -> None:
    while executor.run_once(kinds=kinds):
        pass


def _started(store: Store, fake: FakeGitHub) -> tuple[str, int]:
    """A run of `REPO` started as the start performer starts one (its first
    dispatch waits in the outbox); the run id and the installation's."""
    repo = fake.create_repository(REPO, sample_files(ROADMAP))
    installation = fake.install("octo", [REPO])
    run_id = "gh-octo-demo-main-1"
    key = RunKey(installation.id, REPO, "main")
    start = StartRun(
        at=datetime.now(UTC), run_id=run_id, roadmap=ROADMAP, config=RunConfig(maxParallel=1)
    )
    meta = {"key": key.to_json(), "sha": repo.git.sha("refs/heads/main")}
    decide_step(store, run_id, start, api.tokens, meta=meta)
    return run_id, installation.id


def _settled_dispatch(store: Store, executor: Executor, run_id: str) -> Any:
    """Perform the run's dispatch until the outbox settles it (retries are due fast)."""
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        executor.run_once(kinds=["dispatch-stage"])
        (entry,) = [e for e in store.outbox.list(run_id=run_id) if e.kind == "dispatch-stage"]
        if entry.status in ("done", "dead"):
            return entry
        time.sleep(0.05)
    raise AssertionError(f"the dispatch never settled: {entry}")


def _odw_status(tmp_path: Path, run_odw: RunOdw) -> str:
    env = {**os.environ, "ODW_DATABASE_URL": f"sqlite:///{tmp_path / 'odw.sqlite3'}"}
    done = run_odw("app", "status", env=env)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.parametrize(
    ("action", "words"),
    [("deleted", "the App was uninstalled from octo"), ("suspend", "was suspended on GitHub")],
    ids=["uninstalled", "suspended"],
)
def test_an_uninstalled_or_suspended_installation_halts_its_open_runs(
    store: Store, fake: FakeGitHub, tmp_path: Path, run_odw: RunOdw, action: str, words: str
) -> None:
    run_id, installation = _started(store, fake)
    if action == "deleted":
        fake.uninstall(installation)
    else:
        fake.suspend(installation)
    # GitHub's webhook, through ODW's own delivery worker.
    (delivery,) = [d for d in fake.webhooks.deliveries if d.action == action]
    body = json.dumps(delivery.payload).encode()
    store.inbox.record(delivery.id, "installation", action, installation, body)
    worker = DeliveryWorker(store, build_router(), WORKER)
    assert worker.process_one() == "processed"
    stop = load_state(store, run_id).stop
    assert stop is not None and stop.hard
    assert stop.reason.startswith("halted by GitHub: ") and words in stop.reason
    assert words in _odw_status(tmp_path, run_odw)  # `odw app status` shows it
    # The dispatch that was waiting is settled, not retried until it gives up.
    entry = _settled_dispatch(store, _executor(store, fake, tmp_path / "data"), run_id)
    assert (entry.status, entry.attempts) == ("dead", 1), entry
    assert "InstallationUnavailable" in (entry.last_error or "")
    assert not fake.runs


def test_a_suspension_whose_webhook_was_lost_halts_the_run_when_github_refuses_a_token(
    store: Store, fake: FakeGitHub, tmp_path: Path, run_odw: RunOdw
) -> None:
    run_id, installation = _started(store, fake)
    fake.suspend(installation)  # its webhook never reaches ODW
    entry = _settled_dispatch(store, _executor(store, fake, tmp_path / "data"), run_id)
    assert (entry.status, entry.attempts) == ("dead", 1), entry
    tokens = [r for r in fake.requests if r["path"].endswith("/access_tokens")]
    assert [r["status"] for r in tokens] == [403]
    stop = load_state(store, run_id).stop
    assert stop is not None and stop.hard
    assert "the App's installation is suspended on GitHub" in stop.reason
    assert "/odw resume" in stop.reason
    assert "installation is suspended" in _odw_status(tmp_path, run_odw)
    assert not fake.runs


def test_a_run_whose_repository_was_renamed_halts_saying_where_it_went(
    store: Store, fake: FakeGitHub, tmp_path: Path
) -> None:
    run_id, _ = _started(store, fake)
    executor = _executor(store, fake, tmp_path / "data")
    _drain(executor, ["app-views"])  # the run's checks exist under the old name
    fake.rename_repository(REPO, "octo/renamed")

    assert executor.run_once(kinds=["dispatch-stage"]) == 1
    (entry,) = [e for e in store.outbox.list(run_id=run_id) if e.kind == "dispatch-stage"]
    assert (entry.status, entry.attempts) == ("dead", 1), entry  # never retried
    assert not fake.runs  # nothing was dispatched, at either name
    stop = load_state(store, run_id).stop
    assert stop is not None and stop.hard
    assert "halted by GitHub: the repository moved to octo/renamed" in stop.reason
    view = store.projections.run(run_id)
    assert view is not None and view.data["key"]["repository"] == "octo/renamed"
    assert "the repository moved to octo/renamed" in view.data["result"]["halted"]
    # The run's check, written at the new name, says so.
    _drain(executor, ["app-views"])
    (check,) = [c for c in fake.check_runs.values() if c.name == "ODW · run"]
    assert check.repo == "octo/renamed"
    assert "the repository moved to octo/renamed" in check.output["summary"]
