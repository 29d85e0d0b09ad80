"""`odw serve` stops within seconds of SIGTERM, also right after a burst, and
keeps every delivery it acknowledged for the next start (issue 29, item 3)."""

from __future__ import annotations

import contextlib
import http.client
import os
import signal
import subprocess
import threading
import time
import uuid
from pathlib import Path

import pytest

from app.store import Store
from app.web.server import STOP_SECONDS
from tests.conftest import odw_executable
from tests.service.live import free_port, kill_group, running_service, service_env, wait_healthy
from tests.service.test_live_service import wait_final
from tests.webhooks import oracle

pytestmark = pytest.mark.slow

SECRET = "stop-test-secret"
# The figures of the report: 8 seconds of signed pushes from 16 connections.
BURST_SECONDS = 8.0
SENDERS = 16


def burst(port: int, acked: list[str], stop: threading.Event) -> list[threading.Thread]:
    """SENDERS kept-alive connections posting signed pushes until `stop`;
    the ids answered 202 go to `acked`."""
    (example, *_) = oracle.require("push")
    lock = threading.Lock()

    def send() -> None:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        while not stop.is_set():
            body, headers = oracle.signed(
                SECRET, "push", example.as_app_delivery(), f"stop-{uuid.uuid4().hex}"
            )
            try:
                conn.request("POST", "/webhooks", body=body, headers=headers)
                resp = conn.getresponse()
                resp.read()
            except (OSError, http.client.HTTPException):
                return  # the service is going: this one was never acknowledged
            if resp.status == 202:
                with lock:
                    acked.append(headers["X-GitHub-Delivery"])

    threads = [threading.Thread(target=send) for _ in range(SENDERS)]
    for t in threads:
        t.start()
    return threads


@pytest.mark.parametrize(
    "whole_group",
    [True, False],
    ids=["sigterm_to_the_process_group", "sigterm_to_the_master_alone"],
)
def test_serve_stops_within_seconds_after_a_burst_and_keeps_what_it_acknowledged(
    tmp_path: Path, whole_group: bool
) -> None:
    """SIGTERM while 16 connections still send: `odw serve` exits within
    STOP_SECONDS (a container platform's patience before SIGKILL; a group
    signal, as systemd or `kill -TERM -PGID` send, once took 30 s), and the
    next start processes every delivery that was answered 202."""
    log = tmp_path / "serve.log"
    port = free_port()
    env = service_env(tmp_path, SECRET, ODW_WORKERS="2")
    with log.open("ab") as out:
        proc = subprocess.Popen(
            [odw_executable(), "serve", "--host", "127.0.0.1", "--port", str(port)],
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    acked: list[str] = []
    stop = threading.Event()
    try:
        wait_healthy(port, proc)
        senders = burst(port, acked, stop)
        time.sleep(BURST_SECONDS)  # the burst's length, not a wait for a condition
        signalled = time.monotonic()
        if whole_group:
            os.killpg(proc.pid, signal.SIGTERM)
        else:
            proc.send_signal(signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=30)
        took = time.monotonic() - signalled
        stop.set()
        for t in senders:
            t.join(timeout=30)
    finally:
        stop.set()
        kill_group(proc, signal.SIGKILL)
    assert took < STOP_SECONDS, f"stopped {took:.1f} s after SIGTERM"
    assert proc.returncode == 0
    assert "did not stop in time" not in log.read_text()
    assert len(acked) > 100, "the burst was not a burst"

    with running_service(tmp_path, SECRET, log, ODW_WORKERS="2"):
        store = Store.open(f"sqlite:///{tmp_path / 'odw.sqlite3'}", migrate_schema=False)
        try:
            wait_final(store, acked, timeout=60)
            statuses = {store.inbox.get(i).status for i in acked}  # type: ignore[union-attr]
        finally:
            store.close()
    assert statuses == {"processed"}
