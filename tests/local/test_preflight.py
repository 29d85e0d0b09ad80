"""Local mode's auth preflight against a real smart-HTTP origin (the fake
GitHub's git server, which enforces each token's `contents` level)."""

from __future__ import annotations

import dataclasses
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from app.gitops.auth import auth_env
from app.gitops.evidence.repo import LocalRepo
from app.local.eventlog import unfinished_run
from app.local.launch import Request, load_plan
from app.local.origin_access import check
from app.local.run import RunRefused, execute, exit_code_of
from app.store import Store
from app.store.store import sqlite_url
from tests.fakegithub import FakeGitHub
from tests.local.conftest import make_project

ROADMAP = "## Phase 1\n- [ ] 1.1.1. First\n"
REPO = "octo/demo"


def _clone(fake: FakeGitHub, token: str, where: Path) -> LocalRepo:
    env = auth_env(where / "auth", token)
    subprocess.run(
        ["git", "clone", "-q", fake.git_url(REPO), str(where / "clone")],
        env={**os.environ, **env, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": "/dev/null"},
        check=True,
        capture_output=True,
        timeout=60,
    )
    return dataclasses.replace(LocalRepo.open(where / "clone"), env=env)


@pytest.fixture
def fake(tmp_path: Path):  # type: ignore[no-untyped-def]
    server = FakeGitHub(tmp_path / "github").start()
    yield server
    server.stop()


def test_credentials_that_cannot_push_task_branches_block_the_run_before_any_dispatch(
    fake: FakeGitHub, tmp_path: Path
) -> None:
    _, token, repo, plan, ran = _planned(fake, tmp_path, "read")
    outcome = execute(repo, plan)
    result = outcome.result
    assert result["recovery"]["blocked"] == (
        "auth-preflight-failed: contents: write (push task branches)"
    )
    assert "grant contents: write (push task branches)" in result["halted"]
    assert "403" in result["halted"] or "not granted" in result["halted"]
    assert exit_code_of(result) == 1
    assert not ran.exists(), "an agent ran although the preflight failed"
    assert set(repo.origin_heads()) == {"main"}, "something was pushed"
    assert token not in str(result)


def test_a_resumed_run_whose_credentials_cannot_push_is_refused_and_kept(
    fake: FakeGitHub, tmp_path: Path
) -> None:
    installation, _, repo, plan, ran = _planned(fake, tmp_path, "write")

    def interrupt(events: object) -> None:
        raise KeyboardInterrupt  # Ctrl-C once the run's start is on disk

    with pytest.raises(KeyboardInterrupt):
        execute(repo, plan, feed=interrupt)
    first = _unfinished(repo)
    assert first is not None, "the interrupted run is not there to resume"

    # The credentials lose write access; the same command again resumes the run.
    read_only = fake.mint_token(installation, None, {"contents": "read"}).token
    weaker = dataclasses.replace(repo, env=auth_env(tmp_path / "auth-read", read_only))
    resumed: list[tuple[str, bool]] = []
    with pytest.raises(RunRefused) as refused:
        execute(weaker, plan, on_run=lambda run_id, again: resumed.append((run_id, again)))
    assert resumed == [(first, True)]
    assert "auth preflight failed, nothing was dispatched" in str(refused.value)
    assert "grant contents: write (push task branches)" in str(refused.value)
    assert read_only not in str(refused.value)
    assert not ran.exists(), "an agent ran although the preflight failed"
    assert set(repo.origin_heads()) == {"main"}, "something was pushed"
    # Refused, not ended: the run is still there for credentials that can push.
    assert _unfinished(repo) == first


def _planned(
    fake: FakeGitHub, tmp_path: Path, contents: str
) -> tuple[Any, str, LocalRepo, Any, Path]:
    """`REPO` with a roadmap, the installation, a token granted `contents`, a clone
    made with it, and the plan of a run whose agent would leave the returned file
    behind (it must not appear)."""
    fake.create_repository(REPO, {"docs/roadmap.md": ROADMAP})
    installation = fake.install("octo", [REPO])
    token = fake.mint_token(installation, None, {"contents": contents}).token
    repo = _clone(fake, token, tmp_path)
    ran = tmp_path / "agent-ran"
    heads = repo.origin_heads()

    def read(branch: str, path: str) -> str | None:
        repo.fetch(branch)
        return repo.show(branch, path)

    plan = load_plan(Request(path=repo.path, agent=f"touch {ran}"), "main", read, heads)
    return installation, token, repo, plan, ran


def _unfinished(repo: LocalRepo) -> str | None:
    store = Store.open(sqlite_url(repo.state_dir / "local.sqlite3"))
    try:
        return unfinished_run(store, "main")
    finally:
        store.close()


def test_credentials_that_can_push_pass_the_preflight(fake: FakeGitHub, tmp_path: Path) -> None:
    fake.create_repository(REPO, {"docs/roadmap.md": ROADMAP})
    installation = fake.install("octo", [REPO])
    token = fake.mint_token(installation, None, {"contents": "write"}).token
    repo = _clone(fake, token, tmp_path)
    preflight = check(repo, "main")
    assert preflight.ok, preflight.missing
    assert set(repo.origin_heads()) == {"main"}, "the dry-run push created a branch"


def test_a_base_origin_does_not_have_blocks_reading(tmp_path: Path) -> None:
    project = make_project(tmp_path, ROADMAP)
    preflight = check(LocalRepo.open(project.clone), "no-such-base")
    assert [m.grant() for m in preflight.missing] == ["contents: read (read the base)"]
    assert check(LocalRepo.open(project.clone), "main").ok
