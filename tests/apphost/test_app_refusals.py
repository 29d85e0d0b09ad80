"""Runs GitHub refuses or stops: a repository that disallows squash merging under
`integration: pull-request` (refused before anything is dispatched), and a
repository renamed under an open run (the run halts saying where it went)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from app.apphost import api
from app.apphost.executor import Executor, HostConfig
from app.apphost.runs import RunKey
from app.apphost.step import decide_step, load_state
from app.core.config import RunConfig
from app.core.inputs import StartRun
from app.github.auth import AppCredentials
from app.github.client import GitHubApp
from app.store import Store
from tests.apphost.harness import ODW_YML, REPO, ROADMAP, sample_files
from tests.fakegithub import FakeGitHub


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


def test_a_run_whose_repository_was_renamed_halts_saying_where_it_went(
    store: Store, fake: FakeGitHub, tmp_path: Path
) -> None:
    repo = fake.create_repository(REPO, sample_files(ROADMAP))
    installation = fake.install("octo", [REPO])
    main = repo.git.sha("refs/heads/main")
    run_id = "gh-octo-demo-main-1"
    key = RunKey(installation.id, REPO, "main")
    start = StartRun(
        at=datetime.now(UTC), run_id=run_id, roadmap=ROADMAP, config=RunConfig(maxParallel=1)
    )
    decide_step(store, run_id, start, api.tokens, meta={"key": key.to_json(), "sha": main})
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
