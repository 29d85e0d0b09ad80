"""GitHub dispatches `odw-stage.yml` only when the default branch has it (and
runs the copy on the dispatched branch): the preflight finds out before a run
dispatches anything, and says what to commit where."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.apphost import api
from app.apphost.executor import Executor, HostConfig
from app.apphost.installation_access import check
from app.apphost.runs import RunKey, find_open
from app.apphost.step import load_state
from app.github.auth import AppCredentials
from app.github.client import GitHubApp
from app.store import Store
from tests.apphost.harness import REPO, sample_files
from tests.fakegithub import FakeGitHub

ROADMAP = "# Roadmap\n\n- [ ] 1.1. Add a greeting\n"
WORKFLOW_PATH = ".github/workflows/odw-stage.yml"


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    s = Store.open(f"sqlite:///{tmp_path / 'odw.sqlite3'}")
    yield s
    s.close()


def _app(fake: FakeGitHub) -> GitHubApp:
    return GitHubApp(AppCredentials(fake.app_id, fake.private_key_pem), fake.api_url)


def _without_workflow() -> dict[str, str]:
    return {k: v for k, v in sample_files(ROADMAP).items() if k != WORKFLOW_PATH}


def _repo(fake: FakeGitHub, *, on_main: bool, on_dev: bool) -> int:
    """`octo/demo` (default branch `main`) and a branch `dev`, each with or without
    the stage workflow; the App installed. Returns the installation id."""
    repo = fake.create_repository(REPO, sample_files(ROADMAP) if on_main else _without_workflow())
    dev = sample_files(ROADMAP) if on_dev else _without_workflow()
    repo.git.commit_files("dev", dev, "the dev line", parent=None)
    return fake.install("octo", [REPO]).id


@pytest.mark.parametrize(
    ("on_main", "on_dev", "base", "says"),
    [
        (False, False, "main", "commit .github/workflows/odw-stage.yml (`odw init` writes it) "
         "to `main`, the default branch of octo/demo"),
        (False, True, "dev", "to `main`, the default branch of octo/demo, then start the run "
         "again; this run's base `dev` is not the default branch"),
        (True, False, "dev", "commit .github/workflows/odw-stage.yml to `dev`, this run's base"),
    ],
    ids=["first-install-before-the-workflow-reached-main", "only-on-the-base",
         "only-on-the-default-branch"],
)  # fmt: skip
def test_a_workflow_github_cannot_dispatch_fails_the_preflight_saying_what_to_commit_where(
    fake: FakeGitHub, on_main: bool, on_dev: bool, base: str, says: str
) -> None:
    installation = _repo(fake, on_main=on_main, on_dev=on_dev)
    preflight = check(_app(fake).repository(installation, REPO), base)
    assert not preflight.ok
    assert says in preflight.halt()
    assert preflight.halt().startswith("auth preflight failed, nothing was dispatched: commit")


@pytest.mark.parametrize("base", ["main", "dev"], ids=["base-is-default", "base-is-another-branch"])
def test_a_workflow_on_the_default_branch_and_the_base_passes(fake: FakeGitHub, base: str) -> None:
    installation = _repo(fake, on_main=True, on_dev=True)
    preflight = check(_app(fake).repository(installation, REPO), base)
    assert preflight.ok, preflight.missing
    asked = [r for r in fake.requests if r["path"].endswith("/actions/workflows/odw-stage.yml")]
    assert [r["status"] for r in asked] == [200]


def test_a_run_before_the_workflow_reached_the_default_branch_stops_and_dispatches_nothing(
    fake: FakeGitHub, store: Store, tmp_path: Path
) -> None:
    installation = _repo(fake, on_main=False, on_dev=True)
    key = RunKey(installation, REPO, "main")
    assert api.request_start(store, key, by="mona")
    executor = Executor(store, _app(fake), HostConfig(data_dir=tmp_path / "data"))
    deadline = time.monotonic() + 30
    while (run_id := find_open(store, key)) is None:
        assert time.monotonic() < deadline
        executor.run_once(kinds=["app-start"])
    stop = load_state(store, run_id).stop
    assert stop is not None and stop.kind == "auth"
    assert "commit .github/workflows/odw-stage.yml (`odw init` writes it) to `main`" in stop.reason
    executor.run_once(limit=20)
    assert not [r for r in fake.requests if r["path"].endswith("/dispatches")]
    assert fake.runs == {}
