"""`odw app run` tells the truth (issue 29, item 4): it refuses when no service
that runs the App reads the database (the service's heartbeat), and finds the
App's installation on GitHub itself when none was recorded."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.store import Store
from tests.apphost.harness import REPO, Service, sample_files, wait_until
from tests.conftest import RunOdw
from tests.fakegithub import FakeGitHub
from tests.service.live import running_service, service_env

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("apphost")]


def _nothing_recorded(data: Path) -> bool:
    store = Store.open(f"sqlite:///{data / 'odw.sqlite3'}")
    try:
        return store.outbox.list() == [] and store.projections.runs() == []
    finally:
        store.close()


def test_app_run_with_no_service_says_so_exits_non_zero_and_records_nothing(
    run_odw: RunOdw, tmp_path: Path
) -> None:
    env = service_env(tmp_path, None)
    done = run_odw("app", "run", REPO, "--installation", "7", env=env)
    assert done.returncode == 1
    assert done.stderr == (
        f"odw app: no ODW service is reading sqlite:///{tmp_path / 'odw.sqlite3'}; "
        "start it with `odw serve` (with the same ODW_DATABASE_URL or ODW_DATA_DIR)\n"
    )
    assert _nothing_recorded(tmp_path)
    status = run_odw("app", "status", env=env)
    assert status.returncode == 0 and status.stdout == "odw: no runs yet\n"
    assert "no ODW service is reading this database" in status.stderr


def test_app_run_against_a_service_without_the_app_says_what_to_set(
    run_odw: RunOdw, tmp_path: Path
) -> None:
    data = tmp_path / "service"
    with running_service(data, "s3cret", tmp_path / "serve.log"):
        env = service_env(data, None)
        wait_until(
            "the worker's heartbeat",
            lambda: (
                "does not run the App"
                in run_odw("app", "run", REPO, "--installation", "7", env=env).stderr
            ),
            timeout=30,
        )
        done = run_odw("app", "run", REPO, "--installation", "7", env=env)
        assert done.returncode == 1
        assert "ODW_APP_ID and ODW_PRIVATE_KEY (or ODW_PRIVATE_KEY_PATH)" in done.stderr
        status = run_odw("app", "status", env=env)
        assert "no ODW service" not in status.stderr


def test_app_run_finds_an_unrecorded_installation_on_github_and_stops_when_the_service_does(
    fake: FakeGitHub, service: Service
) -> None:
    # Installed while no webhook reached the service: nothing recorded.
    url, fake.webhooks.url = fake.webhooks.url, None
    repo = fake.create_repository(REPO, sample_files())
    installation = fake.install("octo", [REPO])
    fake.webhooks.url = url
    store = service.store()
    try:
        assert store.installations.installation_for_repository(REPO) is None
    finally:
        store.close()

    service.run_app()
    (run,) = wait_until("a run to start", service.runs, timeout=60)
    assert run["key"]["installation"] == installation.id
    assert run["sha"] == repo.git.sha("refs/heads/main")
    assert any(
        r["method"] == "GET" and r["path"] == f"/repos/{REPO}/installation" and r["status"] == 200
        for r in fake.requests
    )

    fake.create_repository("octo/elsewhere")
    done = service.odw("app", "run", "octo/elsewhere")
    assert done.returncode == 1
    assert done.stderr == (
        "odw app: the App is not installed on octo/elsewhere (GitHub answered 404): install "
        f"it there from {fake.host_url}/apps/odw/installations/new\n"
    )

    service.stop()  # the worker ends its heartbeat as it stops
    done = service.odw("app", "run", REPO)
    assert done.returncode == 1 and "no ODW service is reading" in done.stderr
