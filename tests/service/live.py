"""Helpers for tests that run the real service: `odw serve` under gunicorn on
loopback, driven over HTTP, always stopped (process group) at the end."""

from __future__ import annotations

import http.client
import os
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.conftest import odw_executable


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def service_env(data_dir: Path, secret: str | None, **extra: str) -> dict[str, str]:
    """This environment without its ODW_* settings, plus `extra`; no
    ODW_WEBHOOK_SECRET when `secret` is None (it comes from ODW_ENV_FILE)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ODW_")}
    if secret is not None:
        env["ODW_WEBHOOK_SECRET"] = secret
    env.update(ODW_DATA_DIR=str(data_dir), **extra)
    return env


def wait_healthy(port: int, proc: subprocess.Popen[bytes], timeout: float = 60) -> None:
    """Until `/healthz` answers 200: the start-up checks passed, the intake
    answers and (with ODW_WORKERS > 0) a delivery worker beats. A hang-catcher:
    on a machine shared by parallel suites starting all three took over 30 s."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"service exited with {proc.returncode}")
        try:
            status, _ = request(port, "GET", "/healthz", timeout=2)
            if status == 200:
                return
        except OSError:
            pass
        time.sleep(0.1)
    raise TimeoutError("service did not become healthy")


def request(
    port: int,
    method: str,
    path: str,
    body: bytes | None = None,
    headers: dict[str, str] | None = None,
    timeout: float = 10,
) -> tuple[int, bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        conn.request(method, path, body=body, headers=headers or {})
        resp = conn.getresponse()
        return resp.status, resp.read()
    finally:
        conn.close()


def kill_group(proc: subprocess.Popen[bytes], sig: int = signal.SIGKILL) -> None:
    try:
        os.killpg(proc.pid, sig)
    except ProcessLookupError:
        return
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)


@contextmanager
def running_service(
    data_dir: Path, secret: str, log: Path, cwd: Path | None = None, **extra: str
) -> Iterator[tuple[int, subprocess.Popen[bytes]]]:
    """`odw serve` on a free loopback port, started in `cwd`, with ODW_* `extra`."""
    port = free_port()
    with log.open("ab") as out:
        proc = subprocess.Popen(
            [odw_executable(), "serve", "--host", "127.0.0.1", "--port", str(port)],
            cwd=cwd,
            env=service_env(data_dir, secret, **extra),
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        wait_healthy(port, proc)
        yield port, proc
    finally:
        kill_group(proc, signal.SIGTERM)
