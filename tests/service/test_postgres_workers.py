"""Two `odw worker` processes sharing PostgreSQL process each delivery once."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from app.store import Store
from tests.conftest import odw_executable
from tests.service.live import kill_group
from tests.store.databases import postgres_schema_url
from tests.store.reads import recorded_per_delivery
from tests.webhooks import oracle

pytestmark = [pytest.mark.postgres, pytest.mark.slow]


def start_worker(url: str, log: Path) -> subprocess.Popen[bytes]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ODW_")}
    env.update(ODW_DATABASE_URL=url, ODW_WORKERS="2", ODW_POLL_SECONDS="0.05")
    with log.open("wb") as out:
        return subprocess.Popen(
            [odw_executable(), "worker"],
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )


def wait_for_line(log: Path, text: str, proc: subprocess.Popen[bytes], timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if text in log.read_text(errors="replace"):
            return
        assert proc.poll() is None, log.read_text(errors="replace")
        time.sleep(0.05)
    raise TimeoutError(f"{text!r} never appeared in {log}")


def test_two_worker_processes_process_each_delivery_exactly_once(tmp_path: Path) -> None:
    examples = oracle.require("push", "pull_request", "check_run", "workflow_job")
    with postgres_schema_url() as url:
        store = Store.open(url)
        logs = [tmp_path / "worker-a.log", tmp_path / "worker-b.log"]
        procs = [start_worker(url, log) for log in logs]
        try:
            for proc, log in zip(procs, logs, strict=True):
                wait_for_line(log, "worker started", proc)
            ids = []
            for i in range(300):
                ex = examples[i % len(examples)]
                payload = ex.as_app_delivery()
                store.inbox.record(
                    f"pg-{i}", ex.event, payload.get("action"), 1, json.dumps(payload).encode()
                )
                ids.append(f"pg-{i}")
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                counts = store.inbox.counts()
                if sum(n for (_e, s), n in counts.items() if s == "processed") == len(ids):
                    break
                time.sleep(0.1)
            for proc in procs:
                kill_group(proc, signal.SIGTERM)
            assert [p.returncode for p in procs] == [0, 0]
            statuses = {store.inbox.get(i).status for i in ids}  # type: ignore[union-attr]
            assert statuses == {"processed"}
            counts_by_delivery = recorded_per_delivery(store)
            assert [i for i in ids if counts_by_delivery.get(i) != 1] == []
            pids = {store.inbox.get(i).processed_by.split(":")[1] for i in ids}  # type: ignore[union-attr]
            assert pids == {str(p.pid) for p in procs}, "both processes should have taken work"
        finally:
            for proc in procs:
                kill_group(proc)
            store.close()
