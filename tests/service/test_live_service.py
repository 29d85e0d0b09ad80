"""The real service under gunicorn on loopback, driven by signed deliveries."""

from __future__ import annotations

import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from app.store import Store
from bench.support import session_members
from tests import needs
from tests.conftest import REPO_ROOT
from tests.hostile_modules import plant
from tests.service.live import free_port, kill_group, request, running_service, wait_healthy
from tests.store.databases import database_url
from tests.store.reads import recorded_per_delivery
from tests.webhooks import oracle

pytestmark = pytest.mark.slow

SECRET = "live-test-secret"
FINAL = ("processed", "ignored", "failed")


def wait_final(store: Store, ids: list[str], timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    pending = list(ids)
    while pending and time.monotonic() < deadline:
        pending = [i for i in pending if (d := store.inbox.get(i)) is None or d.status not in FINAL]
        if pending:
            time.sleep(0.1)
    assert not pending, f"{len(pending)} deliveries never finished, e.g. {pending[:3]}"


def oversized_post(port: int, size: int = 26_000_000) -> tuple[int, int]:
    """Send headers for a `size` body and only part of it; the answer must come
    without the server waiting for (or reading) the rest."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    try:
        head = (
            "POST /webhooks HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            "X-GitHub-Event: push\r\nX-GitHub-Delivery: too-big\r\n"
            f"X-Hub-Signature-256: sha256={'0' * 64}\r\nContent-Length: {size}\r\n\r\n"
        )
        sock.sendall(head.encode() + b" " * 65536)
        reply = sock.recv(4096).decode("latin-1")
        return int(reply.split(" ", 2)[1]), 65536
    finally:
        sock.close()


def test_published_examples_through_gunicorn(tmp_path: Path) -> None:
    examples = oracle.require(*oracle.ODW_EVENTS)
    admin = {"Authorization": "Bearer live-admin-token"}
    with running_service(
        tmp_path,
        SECRET,
        tmp_path / "serve.log",
        ODW_WORKERS="2",
        ODW_ADMIN_TOKEN="live-admin-token",
    ) as (port, _):
        accepted: list[str] = []
        for ex in examples:
            body, headers = oracle.signed(SECRET, ex.event, ex.as_app_delivery())
            status, reply = request(port, "POST", "/webhooks", body, headers)
            assert status == 202, (ex.id, reply)
            accepted.append(headers["X-GitHub-Delivery"])
        body, headers = oracle.signed(SECRET, "push", examples[0].payload, accepted[0])
        assert request(port, "POST", "/webhooks", body, headers)[0] == 202  # duplicate

        body, headers = oracle.signed("wrong", "push", examples[0].payload, "unsigned")
        assert request(port, "POST", "/webhooks", body, headers)[0] == 401
        body, headers = oracle.signed(SECRET, "push", b"<xml/>", "not-json")
        assert request(port, "POST", "/webhooks", body, headers)[0] == 400
        assert oversized_post(port)[0] == 413
        assert request(port, "GET", "/healthz")[0] == 200

        store = Store.open(f"sqlite:///{tmp_path / 'odw.sqlite3'}", migrate_schema=False)
        wait_final(store, accepted)
        for delivery_id in accepted:
            status, reply = request(port, "GET", f"/api/deliveries/{delivery_id}", headers=admin)
            assert status == 200
            assert json.loads(reply)["status"] == "processed", reply
        for refused in ("unsigned", "not-json", "too-big"):
            assert store.inbox.get(refused) is None
        assert sorted(recorded_per_delivery(store).values()) == [1] * len(accepted)
        assert request(port, "GET", "/metrics")[0] == 401
        metrics = request(port, "GET", "/metrics", headers=admin)[1].decode()
        finished = [
            s.value
            for f in text_string_to_metric_families(metrics)
            for s in f.samples
            if s.name == "odw_delivery_processing_seconds_count"
        ]
        assert finished == [len(accepted)]  # counted by the delivery worker's process
        store.close()


@contextmanager
def service_database(kind: str, tmp_path: Path) -> Iterator[tuple[str, dict[str, str]]]:
    """A database URL and the environment that points `odw serve` at it."""
    with database_url(kind, tmp_path) as url:
        if kind == "sqlite":
            yield url, {}
            return
        Store.open(url).close()  # PostgreSQL is migrated explicitly (`odw db upgrade`)
        yield url, {"ODW_DATABASE_URL": url}


@pytest.mark.parametrize("kind", ["sqlite", "postgres"], ids=["sqlite", "postgres"])
def test_kill_9_while_deliveries_are_in_flight_loses_nothing_and_repeats_nothing(
    tmp_path: Path, kind: str
) -> None:
    """16 clients fire; the whole service (master, HTTP process, intake
    process, delivery worker process) is killed with SIGKILL half way; after a restart every
    acknowledged delivery is processed exactly once."""
    examples = oracle.require("push", "pull_request", "issue_comment", "workflow_run")
    log = tmp_path / "serve.log"
    total, senders = 800, 16
    acked: list[str] = []
    lock = threading.Lock()
    with service_database(kind, tmp_path) as (url, db_env):
        extra = {
            "ODW_WORKERS": "2",
            "ODW_DELIVERY_LEASE_SECONDS": "2",
            "ODW_POLL_SECONDS": "0.05",
            **db_env,
        }
        with running_service(tmp_path, SECRET, log, **extra) as (port, proc):
            stop = threading.Event()

            def send(n: int) -> None:
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
                for i in range(n, total, senders):
                    if stop.is_set():
                        return
                    ex = examples[i % len(examples)]
                    body, headers = oracle.signed(
                        SECRET, ex.event, ex.as_app_delivery(), f"kill-{i}-{uuid.uuid4().hex[:6]}"
                    )
                    try:
                        conn.request("POST", "/webhooks", body=body, headers=headers)
                        resp = conn.getresponse()
                        resp.read()
                    except (OSError, http.client.HTTPException):
                        return  # the service died under us: this one was never acknowledged
                    if resp.status == 202:
                        with lock:
                            acked.append(headers["X-GitHub-Delivery"])

            threads = [threading.Thread(target=send, args=(n,)) for n in range(senders)]
            for t in threads:
                t.start()
            # Kill once half is acknowledged and the worker process is at work.
            watch = Store.open(url, migrate_schema=False)
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline and (
                len(acked) < total // 2
                or not any(s == "processed" for _e, s in watch.inbox.counts())
            ):
                time.sleep(0.01)
            kill_group(proc, signal.SIGKILL)  # the whole service: every process in it
            stop.set()
            for t in threads:
                t.join(timeout=30)
            watch.close()

        assert len(acked) >= total // 2
        store = Store.open(url, migrate_schema=False)
        at_kill = {i: store.inbox.get(i).status for i in acked}  # type: ignore[union-attr]
        unfinished = [i for i, s in at_kill.items() if s not in FINAL]
        seen = list(at_kill.values())
        print("status at kill:", {s: seen.count(s) for s in set(seen)})
        with running_service(tmp_path, SECRET, log, **extra):
            wait_final(store, acked, timeout=90)
        statuses = {store.inbox.get(i).status for i in acked}  # type: ignore[union-attr]
        assert statuses == {"processed"}
        counts = recorded_per_delivery(store)
        assert [i for i in acked if counts.get(i) != 1] == []
        assert all(n == 1 for n in counts.values())
        store.close()
    # The kill must have caught work in flight, or the test proved nothing.
    assert unfinished, "every delivery was already finished when the service was killed"


def session_processes(session: int, arg: str) -> list[int]:
    """Pids of the session's processes with `arg` among their arguments."""
    return [pid for pid, argv, _ in session_members(session) if arg.encode() in argv]


def test_a_killed_intake_is_restarted_and_deliveries_meanwhile_are_kept(tmp_path: Path) -> None:
    """The intake process alone dies (SIGKILL): the master starts another on
    the same socket, and a delivery sent in between waits for it and is
    stored before it is acknowledged, never refused."""
    (example, *_) = oracle.require("push")
    log = tmp_path / "serve.log"
    with running_service(tmp_path, SECRET, log, ODW_WORKERS="0") as (port, proc):
        body, headers = oracle.signed(SECRET, "push", example.as_app_delivery(), "before-kill")
        assert request(port, "POST", "/webhooks", body, headers)[0] == 202
        (intake,) = session_processes(proc.pid, "intake")
        os.kill(intake, signal.SIGKILL)
        body, headers = oracle.signed(SECRET, "push", example.as_app_delivery(), "after-kill")
        status, answer = request(port, "POST", "/webhooks", body, headers, timeout=30)
        assert (status, json.loads(answer)["status"]) == (202, "received")
        (restarted,) = session_processes(proc.pid, "intake")
        assert restarted != intake
        assert request(port, "GET", "/healthz")[0] == 200
    store = Store.open(f"sqlite:///{tmp_path / 'odw.sqlite3'}", migrate_schema=False)
    assert store.inbox.get("after-kill") is not None
    store.close()
    assert "intake process" in log.read_text() and "exited; restarting" in log.read_text()


def test_companions_stop_when_their_master_is_killed(tmp_path: Path) -> None:
    """SIGKILL to the `odw serve` master alone (as an OOM killer or a crashed
    supervisor does): its intake and delivery worker notice they were
    reparented and exit, so no orphan keeps polling the database."""
    log = tmp_path / "serve.log"
    with running_service(tmp_path, SECRET, log, ODW_WORKERS="1") as (_, proc):
        companions = [
            *session_processes(proc.pid, "intake"),
            *session_processes(proc.pid, "worker"),
        ]
        assert len(companions) == 2
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
        deadline = time.monotonic() + 30  # a hang-catcher: each checks five times a second
        while any(alive(pid) for pid in companions) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert [pid for pid in companions if alive(pid)] == []
    assert f"worker stopping: its master {proc.pid} is gone" in log.read_text()


def alive(pid: int) -> bool:
    """Running (not a zombie waiting to be reaped by init)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rsplit(b")", 1)[1].split()[0] != b"Z"
    except FileNotFoundError:
        return False


def test_serve_and_its_companions_never_import_modules_of_their_directory(
    tmp_path: Path,
) -> None:
    """`odw serve` started in a directory holding `app/`, `concurrent.py` and
    `logging.py`: its intake and delivery worker start, take and process a
    delivery, and import none of them (a stray `concurrent.py` once made the
    intake crash-loop)."""
    (example, *_) = oracle.require("push")
    here, markers = tmp_path / "service-dir", tmp_path / "imported"
    here.mkdir()
    markers.mkdir()
    plant(here, markers)
    log = tmp_path / "serve.log"
    with running_service(tmp_path, SECRET, log, cwd=here, ODW_WORKERS="1") as (port, _):
        body, headers = oracle.signed(SECRET, "push", example.as_app_delivery(), "in-a-dir")
        status, answer = request(port, "POST", "/webhooks", body, headers, timeout=30)
        assert status == 202, answer
        store = Store.open(f"sqlite:///{tmp_path / 'odw.sqlite3'}", migrate_schema=False)
        wait_final(store, ["in-a-dir"])
        assert store.inbox.get("in-a-dir").status == "processed"  # type: ignore[union-attr]
        store.close()
    assert list(markers.iterdir()) == []
    assert "exited; restarting" not in log.read_text()


def serve_refused(env_extra: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """`odw serve` run with only `env_extra` of ODW's settings, expected to refuse."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ODW_")}
    return subprocess.run(
        [str(Path(sys.executable).with_name("odw")), "serve", "--port", str(free_port())],
        env={**env, **env_extra},
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )


def test_serve_without_a_secret_is_one_clear_line(tmp_path: Path) -> None:
    result = serve_refused({"ODW_DATA_DIR": str(tmp_path)})
    assert result.returncode == 2
    assert result.stderr.strip().count("\n") == 0
    assert "ODW_WEBHOOK_SECRET is not set" in result.stderr


def test_serve_with_a_plain_http_api_url_is_one_clear_line(tmp_path: Path) -> None:
    """JWTs and installation tokens go to ODW_GITHUB_API_URL: never in clear."""
    result = serve_refused(
        {
            "ODW_DATA_DIR": str(tmp_path),
            "ODW_WEBHOOK_SECRET": SECRET,
            "ODW_GITHUB_API_URL": "http://ghe.example.com/api/v3",
        }
    )
    assert result.returncode == 2
    assert result.stderr.strip().count("\n") == 0, result.stderr
    assert "ODW_GITHUB_API_URL: must use https://" in result.stderr


def test_serve_where_no_socket_fits_is_one_clear_line(tmp_path: Path) -> None:
    """A Unix socket's path holds about 100 bytes: a deep TMPDIR is named."""
    deep = tmp_path / ("d" * 120)
    deep.mkdir()
    result = serve_refused(
        {"ODW_DATA_DIR": str(tmp_path), "ODW_WEBHOOK_SECRET": SECRET, "TMPDIR": str(deep)}
    )
    assert result.returncode == 1
    assert result.stderr.strip().count("\n") == 0, result.stderr
    assert f"cannot create the intake socket in {deep}" in result.stderr
    assert "set TMPDIR" in result.stderr


def test_make_run_serves_healthz(tmp_path: Path) -> None:
    venv = Path(sys.executable).parent.parent
    if not (venv / ".installed-stamp").is_file():
        needs.unavailable(needs.MAKE_VENV)
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("ODW_")}
    proc = subprocess.Popen(
        ["make", "-s", "run", f"VENV={venv}", f"PORT={port}", f"RUN_DIR={tmp_path}"],
        cwd=REPO_ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        wait_healthy(port, proc)  # type: ignore[arg-type]
        secret_file = tmp_path / "webhook-secret"
        assert secret_file.is_file() and oct(secret_file.stat().st_mode & 0o777) == "0o600"
        assert (tmp_path / "odw.sqlite3").is_file()
        body, headers = oracle.signed(secret_file.read_text().strip(), "star", {}, "via-make")
        assert request(port, "POST", "/webhooks", body, headers)[0] == 202
    finally:
        kill_group(proc, signal.SIGTERM)  # type: ignore[arg-type]
    assert proc.stdout is not None
    assert b"using the local secret in" in proc.stdout.read()


def test_make_run_takes_the_secret_odw_app_register_wrote(tmp_path: Path) -> None:
    """With `ODW_ENV_FILE` (what `odw app register` writes), `make run` makes no
    local secret: the App's own, which GitHub signs with, is the one checked."""
    venv = Path(sys.executable).parent.parent
    if not (venv / ".installed-stamp").is_file():
        needs.unavailable(needs.MAKE_VENV)
    port = free_port()
    settings = tmp_path / "odw.env"
    settings.write_text("ODW_WEBHOOK_SECRET=the-apps-own-secret\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("ODW_")}
    env["ODW_ENV_FILE"] = str(settings)
    proc = subprocess.Popen(
        ["make", "-s", "run", f"VENV={venv}", f"PORT={port}", f"RUN_DIR={tmp_path}"],
        cwd=REPO_ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        wait_healthy(port, proc)  # type: ignore[arg-type]
        assert not (tmp_path / "webhook-secret").exists()
        body, headers = oracle.signed("the-apps-own-secret", "star", {}, "via-env-file")
        assert request(port, "POST", "/webhooks", body, headers)[0] == 202
    finally:
        kill_group(proc, signal.SIGTERM)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("level", "access_lines"), [("INFO", 0), ("DEBUG", 1)], ids=["info-none", "debug-one"]
)
def test_access_line_per_request_only_at_debug(
    tmp_path: Path, level: str, access_lines: int
) -> None:
    """A line per request costs the request threads a shared lock and a write;
    the inbox records every delivery, so gunicorn's access line is for DEBUG."""
    example = oracle.require("push")[0]
    log = tmp_path / "serve.log"
    with running_service(tmp_path, SECRET, log, ODW_WORKERS="0", ODW_LOG_LEVEL=level) as (port, _):
        body, headers = oracle.signed(SECRET, "push", example.as_app_delivery())
        assert request(port, "POST", "/webhooks", body, headers)[0] == 202
    lines = log.read_text(errors="replace").splitlines()
    assert sum("POST /webhooks HTTP/1.1" in line for line in lines) == access_lines
