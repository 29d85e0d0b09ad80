"""The fake GitHub fixtures of the GitHub boundary tests, shared here, with a
store and a CI that passes every open pull request's head."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.gitops.pr_checks import CHECKS_WAKE, ChecksWake
from app.store import Store
from tests.fakegithub import FakeGitHub
from tests.fakegithub.state import Repository
from tests.github.conftest import (  # noqa: F401
    app,
    clock,
    fake,
    sleeper,
)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    s = Store.open(f"sqlite:///{tmp_path / 'odw.sqlite3'}")
    yield s
    s.close()


@pytest.fixture
def ci(fake: FakeGitHub, repo: Repository) -> Iterator[ChecksWake]:  # noqa: F811
    """A CI that passes `ci/test` on every open pull request's head, and pokes
    the process's wake as a `status` webhook would."""
    wake = CHECKS_WAKE
    stop = threading.Event()

    def loop() -> None:
        while not stop.wait(0.02):
            for pull in list(fake.pulls.values()):
                sha = repo.git.sha(f"refs/heads/{pull.head}")
                if pull.state == "open" and sha and sha not in repo.statuses:
                    fake.set_status(repo.full_name, sha, "ci/test", "success")
                    wake.poke(sha)

    thread = threading.Thread(target=loop, daemon=True)
    thread.start()
    yield wake
    stop.set()
    thread.join(5)
