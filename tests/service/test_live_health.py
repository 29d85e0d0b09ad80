"""`/healthz` of the real service reports each part, and answers 503 naming
the part when the delivery worker is down (issue 29, item 3)."""

from __future__ import annotations

import json
import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from app.store.heartbeats import STALE_SECONDS
from tests.fakegithub import FakeGitHub
from tests.fakegithub.faults import server_error
from tests.fakegithub.oracles import REST_OPENAPI, require_oracle
from tests.service.live import free_port, request, running_service
from tests.service.test_live_service import session_processes

pytestmark = pytest.mark.slow

SECRET = "health-test-secret"


def healthz(port: int) -> tuple[int, dict[str, Any]]:
    status, body = request(port, "GET", "/healthz", timeout=10)
    return status, json.loads(body)


def wait_health(port: int, status: int, timeout: float) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    last: tuple[int, dict[str, Any]] = (0, {})
    while time.monotonic() < deadline:
        last = healthz(port)
        if last[0] == status:
            return last[1]
        time.sleep(0.2)
    raise AssertionError(f"/healthz never answered {status}; last {last}")


def test_healthz_is_503_naming_the_worker_while_the_worker_is_hung(tmp_path: Path) -> None:
    """A worker process that stops running (SIGSTOP: as one stuck in a
    deadlock or a hung call is, which its master cannot see) stops renewing
    its heartbeat: `/healthz` answers 503 naming `worker` until it runs again."""
    log = tmp_path / "serve.log"
    with running_service(tmp_path, SECRET, log, ODW_WORKERS="1") as (port, proc):
        status, body = healthz(port)
        assert status == 200
        assert body == {
            "status": "ok",
            "database": "ok",
            "intake": "ok",
            "worker": "ok",
            "github": "not configured",
        }
        (worker,) = session_processes(proc.pid, "worker")
        os.kill(worker, signal.SIGSTOP)
        try:
            down = wait_health(port, 503, timeout=STALE_SECONDS + 15)
        finally:
            os.kill(worker, signal.SIGCONT)
        assert down["down"] == ["worker"]
        assert (down["worker"], down["database"], down["intake"]) == ("down", "ok", "ok")
        assert wait_health(port, 200, timeout=15)["worker"] == "ok"


@pytest.fixture
def fake(tmp_path: Path) -> Iterator[FakeGitHub]:
    require_oracle(REST_OPENAPI)
    server = FakeGitHub(tmp_path / "github").start()
    try:
        yield server
    finally:
        server.stop()
    server.assert_no_violations()


def test_healthz_reports_what_github_answered_at_start(tmp_path: Path, fake: FakeGitHub) -> None:
    """GitHub accepting the App's JWT is `github: ok`; GitHub not answering
    at start is a warning and `github: unreachable`, never a refusal or a 503."""
    key = fake.write_private_key(tmp_path)
    app = {"ODW_APP_ID": str(fake.app_id), "ODW_PRIVATE_KEY_PATH": str(key)}
    log = tmp_path / "serve.log"
    data = tmp_path / "answered"
    with running_service(data, SECRET, log, ODW_GITHUB_API_URL=fake.api_url, **app) as (port, _):
        status, body = healthz(port)
        assert (status, body["github"]) == (200, "ok")
    closed = f"http://127.0.0.1:{free_port()}/api/v3"
    data = tmp_path / "unanswered"
    with running_service(data, SECRET, log, ODW_GITHUB_API_URL=closed, **app) as (port, _):
        status, body = healthz(port)
        assert (status, body["github"]) == (200, "unreachable")
    assert "ODW_GITHUB_API_URL: GitHub did not accept or answer GET /app" in log.read_text()


def test_a_service_started_while_github_fails_is_healthy_at_once_and_acts_once_github_answers(
    tmp_path: Path, fake: FakeGitHub
) -> None:
    """GitHub failing `GET /app` at start (the start check's one try, then the
    host's) costs no backoff: the service answers at once, and the App's work
    starts when GitHub answers the next ask, a few seconds later."""
    require_oracle(REST_OPENAPI)
    fake.inject("GET", "/app", server_error(502), times=2)
    key = fake.write_private_key(tmp_path)
    log = tmp_path / "serve.log"
    began = time.monotonic()
    with running_service(
        tmp_path / "data",
        SECRET,
        log,
        ODW_GITHUB_API_URL=fake.api_url,
        ODW_APP_ID=str(fake.app_id),
        ODW_PRIVATE_KEY_PATH=str(key),
    ) as (port, _):
        assert time.monotonic() - began < 15, "the service waited through GitHub's backoff"
        status, body = healthz(port)
        assert (status, body["github"]) == (200, "unreachable")
        deadline = time.monotonic() + 30
        said = f"the App is {fake.app_slug} "
        while said not in log.read_text() and time.monotonic() < deadline:
            time.sleep(0.2)
    text = log.read_text()
    assert said in text, text[-2000:]
    assert text.count("GitHub did not say who the App is") == 1
