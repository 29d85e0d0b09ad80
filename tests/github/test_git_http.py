"""Runners and the integrator use real git against the fake, with the
installation token through GIT_ASKPASS (never in a URL or .git/config)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from app.github.client import RepositoryClient
from app.gitops.auth import auth_env
from tests.fakegithub import FakeGitHub
from tests.fakegithub.state import Repository
from tests.github.conftest import REPO


def _git(*args: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["git", *args], cwd=cwd, env=env, capture_output=True, text=True, check=False
    )


def _env(tmp_path: Path, token: str | None) -> dict[str, str]:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    return {
        **os.environ,
        "HOME": str(home),
        "GIT_TERMINAL_PROMPT": "0",
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_AUTHOR_NAME": "runner",
        "GIT_AUTHOR_EMAIL": "runner@example.com",
        "GIT_COMMITTER_NAME": "runner",
        "GIT_COMMITTER_EMAIL": "runner@example.com",
        **auth_env(tmp_path / "data", token),
    }


def test_clone_commit_push_with_the_installation_token_sends_a_push_webhook(
    client: RepositoryClient, fake: FakeGitHub, repo: Repository, tmp_path: Path
) -> None:
    env = _env(tmp_path, client.git_token(write=True))
    work = tmp_path / "work"
    done = _git("clone", fake.git_url(REPO), str(work), cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stderr
    (work / "plan.md").write_text("# plan\n")
    _git("checkout", "-b", "roadmap-1-1", cwd=work, env=env)
    _git("add", "plan.md", cwd=work, env=env)
    _git("commit", "-m", "plan 1.1", cwd=work, env=env)
    pushed = _git("push", "origin", "roadmap-1-1", cwd=work, env=env)
    assert pushed.returncode == 0, pushed.stderr
    head = _git("rev-parse", "HEAD", cwd=work, env=env).stdout.strip()
    assert repo.git.sha("refs/heads/roadmap-1-1") == head
    pushes = [d.payload for d in fake.webhooks.deliveries if d.event == "push"]
    assert [(p["ref"], p["after"]) for p in pushes] == [("refs/heads/roadmap-1-1", head)]
    assert pushes[0]["installation"]["id"] == client.installation_id


def test_a_read_only_token_can_fetch_but_not_push(
    client: RepositoryClient, fake: FakeGitHub, tmp_path: Path
) -> None:
    env = _env(tmp_path, client.git_token(write=False))
    work = tmp_path / "work"
    assert _git("clone", fake.git_url(REPO), str(work), cwd=tmp_path, env=env).returncode == 0
    _git("commit", "--allow-empty", "-m", "nope", cwd=work, env=env)
    refused = _git("push", "origin", "HEAD:main", cwd=work, env=env)
    assert refused.returncode != 0
    assert "403" in refused.stderr or "not granted" in refused.stderr


def test_without_a_token_git_is_refused(fake: FakeGitHub, repo: Repository, tmp_path: Path) -> None:
    env = _env(tmp_path, None)
    done = _git("clone", fake.git_url(REPO), str(tmp_path / "w"), cwd=tmp_path, env=env)
    assert done.returncode != 0
    assert "Authentication failed" in done.stderr or "401" in done.stderr
