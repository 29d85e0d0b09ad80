"""`/metrics` of a real `odw serve` across its processes' lives: an HTTP
process killed and replaced by gunicorn keeps what it counted (counters never
go back), and a service started again begins from nothing (its directory of
counts is emptied at start)."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.conftest import odw_executable
from tests.service.live import free_port, kill_group, request, service_env, wait_healthy
from tests.webhooks import oracle

pytestmark = pytest.mark.slow

SECRET = "metrics-secret"
ADMIN = "metrics-admin"


def counted(port: int, event: str, outcome: str = "received") -> float:
    status, body = request(port, "GET", "/metrics", headers={"Authorization": f"Bearer {ADMIN}"})
    assert status == 200, body
    return sum(
        s.value
        for f in text_string_to_metric_families(body.decode())
        for s in f.samples
        if s.name == "odw_webhook_deliveries_total"
        and s.labels == {"event": event, "outcome": outcome}
    )


def http_workers(master: int) -> set[int]:
    """gunicorn's HTTP processes: the master's children forked from it, titled
    `gunicorn: worker` when setproctitle is installed, else with the master's
    command line (the intake and the delivery worker have their own)."""
    own = Path(f"/proc/{master}/cmdline").read_bytes()
    children = Path(f"/proc/{master}/task/{master}/children").read_text().split()
    found = set()
    for pid in map(int, children):
        try:
            line = Path(f"/proc/{pid}/cmdline").read_bytes()
            if line == own or line.startswith(b"gunicorn: worker"):
                found.add(pid)
        except FileNotFoundError:
            pass
    return found


def wait_for(what: str, pred, timeout: float = 30):  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while not (value := pred()):
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.1)
    return value


def serve(data: Path, port: int, log: Path) -> subprocess.Popen[bytes]:
    env = service_env(data, SECRET, ODW_ADMIN_TOKEN=ADMIN, ODW_HTTP_PROCESSES="2", ODW_WORKERS="1")
    with log.open("ab") as out:
        proc = subprocess.Popen(
            [odw_executable(), "serve", "--host", "127.0.0.1", "--port", str(port)],
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    wait_healthy(port, proc)
    return proc


def test_counts_outlive_an_http_process_and_a_new_service_starts_from_zero(
    tmp_path: Path,
) -> None:
    port, log = free_port(), tmp_path / "serve.log"
    proc = serve(tmp_path, port, log)
    try:
        for _ in range(12):
            body, headers = oracle.signed(SECRET, "star", {"action": "created"})
            assert request(port, "POST", "/webhooks", body, headers)[0] == 202
        assert counted(port, "star") == 12
        # Refused by gunicorn's worker from the headers alone, before the app.
        unsigned = {"X-GitHub-Event": "star", "Content-Type": "application/json"}
        assert request(port, "POST", "/webhooks", b"{}", unsigned)[0] == 401
        assert counted(port, "unverified", "unauthenticated") == 1
        wait_for("two HTTP processes", lambda: len(http_workers(proc.pid)) == 2)
        workers = http_workers(proc.pid)
        for pid in workers:
            os.kill(pid, signal.SIGKILL)
        wait_for(
            "gunicorn to replace its HTTP processes",
            lambda: len(fresh := http_workers(proc.pid)) == 2 and not fresh & workers,
        )
        wait_healthy(port, proc)
        assert counted(port, "star") == 12
        assert (tmp_path / "metrics" / str(port)).stat().st_mode & 0o777 == 0o700
    finally:
        kill_group(proc, signal.SIGTERM)
    proc = serve(tmp_path, port, log)
    try:
        assert counted(port, "star") == 0
    finally:
        kill_group(proc, signal.SIGTERM)
