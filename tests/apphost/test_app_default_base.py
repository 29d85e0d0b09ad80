"""`odw app run OWNER/REPO` without `--base` runs on the repository's default branch."""

from __future__ import annotations

import pytest

from tests.apphost.harness import REPO, ROADMAP, Service, sample_files, wait_until
from tests.fakegithub import FakeGitHub

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("apphost")]


def test_app_run_without_base_uses_the_repository_default_branch(
    fake: FakeGitHub, service: Service
) -> None:
    repo = fake.create_repository(REPO, sample_files(ROADMAP), default_branch="trunk")
    installation = fake.install("octo", [REPO])
    store = service.store()
    try:
        wait_until(
            "the installation to be recorded",
            lambda: store.installations.installation_for_repository(REPO) == installation.id,
            timeout=30,
        )
    finally:
        store.close()
    said = service.run_app()
    assert "default branch" in said
    (run,) = wait_until("a run to start", service.runs, timeout=60)
    assert run["key"]["base"] == "trunk"
    assert run["sha"] == repo.git.sha("refs/heads/trunk")
    assert run["status"] == "running"
