"""Runs GitHub's own settings refuse before anything is dispatched: a repository
that disallows squash merging under `integration: pull-request`."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from app.apphost import api
from app.apphost.executor import Executor, HostConfig
from app.apphost.runs import RunKey
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
