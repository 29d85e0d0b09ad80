"""`odw app run OWNER/REPO` without `--base` runs on the repository's default branch."""

from __future__ import annotations

import pytest

from tests.apphost.harness import ROADMAP, Service, install_sample, sample_files, wait_until
from tests.fakegithub import FakeGitHub

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("apphost")]


def test_app_run_without_base_uses_the_repository_default_branch(
    fake: FakeGitHub, service: Service
) -> None:
    repo = install_sample(fake, service, sample_files(ROADMAP), default_branch="trunk")
    said = service.run_app()
    assert "default branch" in said
    (run,) = wait_until("a run to start", service.runs, timeout=60)
    assert run["key"]["base"] == "trunk"
    assert run["sha"] == repo.git.sha("refs/heads/trunk")
    assert run["status"] == "running"
