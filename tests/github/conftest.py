"""Fixtures for the GitHub boundary: a started fake GitHub (its violations and
any token seen in logs, request URLs or git configs fail the test), an
installed sample repository, and an App on an injected clock."""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from app.github import GitHubApp
from app.github.auth import AppCredentials, TokenCache
from app.github.client import RepositoryClient
from app.github.retry import RetryPolicy
from tests.fakegithub import FakeGitHub
from tests.fakegithub.oracles import REST_OPENAPI, require_oracle
from tests.fakegithub.state import Installation, Repository
from tests.support import FakeClock

REPO = "octo/demo"
STAGE_WORKFLOW = """\
name: ODW stage
run-name: "odw ${{ inputs.stage }} ${{ inputs.task }} [${{ inputs.token }}]"
on:
  workflow_dispatch:
    inputs:
      stage:
        required: true
        type: choice
        options: [plan, implement, gates, review]
      task: {required: true}
      token: {required: true}
permissions:
  contents: read
jobs:
  stage:
    runs-on: ubuntu-latest
    steps:
      - run: echo "$STAGE"
        env:
          STAGE: ${{ inputs.stage }}
"""
FILES = {
    "README.md": "# demo\n",
    "docs/roadmap.md": "# Roadmap\n\n- [ ] 1.1 First task\n",
    ".github/workflows/odw-stage.yml": STAGE_WORKFLOW,
}


@dataclass
class RecordingSleeper:
    clock: FakeClock
    waits: list[float] = field(default_factory=list)

    def sleep(self, seconds: float) -> None:
        self.waits.append(seconds)
        self.clock.advance(seconds)


def leaked_tokens(fake: FakeGitHub, texts: dict[str, str]) -> list[str]:
    found = []
    for token in list(fake.issued):
        for where, text in texts.items():
            if token in text:
                found.append(f"an installation token appears in {where}")
    return found


@pytest.fixture
def fake(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> Iterator[FakeGitHub]:
    require_oracle(REST_OPENAPI)
    caplog.set_level(logging.DEBUG)
    server = FakeGitHub(tmp_path / "github").start()
    try:
        yield server
    finally:
        server.stop()
    server.assert_no_violations()
    texts = {
        "a log line": caplog.text,
        "a request URL": "\n".join(r["path"] + str(r["query"]) for r in server.requests),
    }
    for config in tmp_path.rglob("config"):
        if config.parent.name == ".git" or config.parent.suffix == ".git":
            texts[str(config)] = config.read_text(errors="replace")
    assert not leaked_tokens(server, texts)


@pytest.fixture
def repo(fake: FakeGitHub) -> Repository:
    return fake.create_repository(REPO, FILES)


@pytest.fixture
def installation(fake: FakeGitHub, repo: Repository) -> Installation:
    return fake.install("octo", [REPO])


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(time.time())  # the real time: tokens carry real expiry dates


@pytest.fixture
def sleeper(clock: FakeClock) -> RecordingSleeper:
    return RecordingSleeper(clock)


@pytest.fixture
def app(fake: FakeGitHub, clock: FakeClock, sleeper: RecordingSleeper) -> GitHubApp:
    return GitHubApp(
        AppCredentials(fake.app_id, fake.private_key_pem),
        fake.api_url,
        tokens=TokenCache(clock),
        policy=RetryPolicy(jitter=lambda: 1.0),
        clock=clock,
        sleeper=sleeper,
    )


@pytest.fixture
def client(app: GitHubApp, installation: Installation) -> RepositoryClient:
    return app.repository(installation.id, REPO)
