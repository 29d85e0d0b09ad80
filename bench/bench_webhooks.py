"""Webhook acknowledgement: latency (p50, p99) and deliveries/s at a fixed
concurrency on loopback, for odw on SQLite and PostgreSQL, beside a no-op
Flask endpoint under the same gunicorn settings (the ratio is odw / no-op)."""

from __future__ import annotations

import http.client
import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from webhooks.signature import sign

REQUESTS = int(os.environ.get("BENCH_WEBHOOK_REQUESTS", "2000"))
CONCURRENCY = int(os.environ.get("BENCH_WEBHOOK_CONCURRENCY", "16"))
SECRET = secrets.token_hex(16)
ODW = str(Path(sys.executable).with_name("odw"))
PG_DEFAULT = "postgresql+psycopg://postgres@127.0.0.1:5432/test"


def _payload() -> bytes:
    """A push delivery of realistic size (about 6 KB)."""
    commits = [
        {"id": uuid.uuid4().hex + "abcdef12", "message": "Change " * 20, "added": ["a.py"] * 5}
        for _ in range(8)
    ]
    body = {
        "ref": "refs/heads/main",
        "before": "0" * 40,
        "after": "1" * 40,
        "commits": commits,
        "repository": {"id": 1, "full_name": "octo/repo", "private": False},
        "installation": {"id": 42},
        "sender": {"login": "octocat", "type": "User"},
    }
    return json.dumps(body).encode()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait(port: int, proc: subprocess.Popen[bytes], path: str = "/webhooks") -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError("server exited during start")
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=1)
            conn.request("GET", path)
            conn.getresponse().read()
            conn.close()
            return
        except OSError:
            time.sleep(0.05)
    raise TimeoutError("server did not start")


@contextmanager
def _server(cmd: list[str], port: int, env: dict[str, str]) -> Iterator[None]:
    proc = subprocess.Popen(
        cmd,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        _wait(port, proc)
        yield
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)


def _drive(port: int) -> tuple[list[float], float, int]:
    body = _payload()
    signature = sign(SECRET, body)
    latencies: list[float] = []
    errors = [0]
    lock = threading.Lock()

    def client(worker: int) -> None:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        mine = []
        for i in range(worker, REQUESTS, CONCURRENCY):
            headers = {
                "Content-Type": "application/json",
                "X-GitHub-Event": "push",
                "X-GitHub-Delivery": f"bench-{i}-{uuid.uuid4().hex}",
                "X-Hub-Signature-256": signature,
            }
            start = time.perf_counter()
            conn.request("POST", "/webhooks", body=body, headers=headers)
            resp = conn.getresponse()
            resp.read()
            mine.append(time.perf_counter() - start)
            if resp.status != 202:
                with lock:
                    errors[0] += 1
        conn.close()
        with lock:
            latencies.extend(mine)

    threads = [threading.Thread(target=client, args=(w,)) for w in range(CONCURRENCY)]
    start = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=300)
    return latencies, time.perf_counter() - start, errors[0]


def _figures(name: str, latencies: list[float], elapsed: float, errors: int) -> dict[str, float]:
    ordered = sorted(latencies)
    p50 = ordered[len(ordered) // 2] * 1000
    p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))] * 1000
    rate = len(ordered) / elapsed
    print(
        f"{name:<22} p50 {p50:7.2f} ms  p99 {p99:7.2f} ms  {rate:8.0f} deliveries/s"
        + (f"  ({errors} non-202)" if errors else "")
    )
    return {"p50": p50, "p99": p99, "rate": rate}


def _ratio(name: str, odw: dict[str, float], base: dict[str, float]) -> None:
    print(
        f"{name:<22} p50 x{odw['p50'] / base['p50']:.2f}  p99 x{odw['p99'] / base['p99']:.2f}"
        f"  throughput x{odw['rate'] / base['rate']:.2f}  (odw / no-op)"
    )


def _postgres_url() -> str | None:
    url = os.environ.get("ODW_TEST_DATABASE_URL") or PG_DEFAULT
    try:
        import psycopg

        plain = url.replace("postgresql+psycopg://", "postgresql://")
        with psycopg.connect(plain, connect_timeout=2):
            pass
    except Exception:
        return None
    return url


@contextmanager
def _pg_schema(url: str) -> Iterator[str]:
    from sqlalchemy import create_engine, text
    from sqlalchemy.engine import make_url

    schema = f"odw_bench_{uuid.uuid4().hex[:10]}"
    admin = create_engine(url)
    with admin.begin() as conn:
        conn.execute(text(f'CREATE SCHEMA "{schema}"'))
    try:
        scoped = make_url(url).update_query_dict({"options": f"-csearch_path={schema}"})
        yield scoped.render_as_string(hide_password=False)
    finally:
        with admin.begin() as conn:
            conn.execute(text(f'DROP SCHEMA "{schema}" CASCADE'))
        admin.dispose()


def _odw(env: dict[str, str]) -> dict[str, float]:
    port = _free_port()
    cmd = [ODW, "serve", "--host", "127.0.0.1", "--port", str(port)]
    with _server(cmd, port, env):
        return _figures(env["_BENCH_NAME"], *_drive(port))


def main() -> None:
    base_env = {k: v for k, v in os.environ.items() if not k.startswith("ODW_")}
    base_env.update(ODW_WEBHOOK_SECRET=SECRET, ODW_LOG_LEVEL="WARNING")
    print(
        f"{REQUESTS} signed push deliveries, {CONCURRENCY} concurrent keep-alive clients, "
        "gunicorn gthread (ODW_HTTP_PROCESSES/ODW_HTTP_THREADS defaults), loopback"
    )
    port = _free_port()
    noop_cmd = [sys.executable, "-m", "bench.noop_server", "--port", str(port)]
    with _server(noop_cmd, port, base_env):
        baseline = _figures("no-op Flask", *_drive(port))

    with tempfile.TemporaryDirectory() as tmp:
        env = {**base_env, "ODW_DATA_DIR": tmp, "_BENCH_NAME": "odw SQLite"}
        _ratio("odw SQLite", _odw(env), baseline)

    url = _postgres_url()
    if url is None:
        print("odw PostgreSQL         skipped: no PostgreSQL answers (set ODW_TEST_DATABASE_URL)")
        return
    with _pg_schema(url) as scoped:
        env = {**base_env, "ODW_DATABASE_URL": scoped, "_BENCH_NAME": "odw PostgreSQL"}
        subprocess.run([ODW, "db", "upgrade"], env=env, check=True, capture_output=True)
        _ratio("odw PostgreSQL", _odw(env), baseline)
