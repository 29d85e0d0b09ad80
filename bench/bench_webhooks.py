"""Webhook acknowledgement under load: deliveries/s, p50 and p99 for `odw
serve` (defaults) committing in its intake process, and the same service
committing in-process (`bench.group_commit_serve`), beside a no-op Flask
endpoint under the same gunicorn shape; SQLite, then PostgreSQL, in rounds
(`BENCH_WEBHOOK_ROUNDS`, default 3), each server on a fresh database.

The load comes from wrk (not Python, so the client does not share the
machine's interpreter budget with the server's GIL): 2 threads, 16 keep-alive
connections, a signed 8 KB `push`, each request with its own delivery id
(a Lua script). wrk is Debian's package; installed here when missing and
running as root. Every figure is printed beside the no-op's of the same
round, as a ratio: the machine is shared, so absolute figures move from run
to run. Goals: odw at least 0.5x the no-op's throughput (issue 17) and its
p99 at most 1.5x the no-op's (issue 26).
"""

from __future__ import annotations

import http.client
import json
import os
import secrets
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path

from app.service_settings import Settings
from app.web.server import http_shape
from bench.support import postgres_url, session_members
from webhooks.signature import sign

CONNECTIONS = int(os.environ.get("BENCH_WEBHOOK_CONNECTIONS", "16"))
THREADS = int(os.environ.get("BENCH_WEBHOOK_THREADS", "2"))
SECONDS = int(os.environ.get("BENCH_WEBHOOK_SECONDS", "8"))
ROUNDS = int(os.environ.get("BENCH_WEBHOOK_ROUNDS", "3"))
# A shared machine under load may take long to start the service.
START_SECONDS = 120
BODY_BYTES = 8192
SECRET = secrets.token_hex(16)
ODW = str(Path(sys.executable).with_name("odw"))

# Each wrk thread numbers its requests; the delivery id is unique per run.
LUA = r"""
local counter = 0
local threads = {}
function setup(thread)
  thread:set("tid", #threads + 1)
  table.insert(threads, thread)
end
function init(args)
  prefix = args[1] .. "-" .. tid .. "-"
end
function request()
  counter = counter + 1
  wrk.headers["X-GitHub-Delivery"] = prefix .. counter
  return wrk.format(nil, nil, nil, nil)
end
function done(summary, latency, requests)
  local bad = summary.errors.status + summary.errors.connect + summary.errors.read
            + summary.errors.write + summary.errors.timeout
  io.write(string.format('{"requests":%d,"micros":%d,"p50":%d,"p99":%d,"errors":%d}\n',
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99), bad))
end
"""


def push_body(size: int = BODY_BYTES) -> bytes:
    """A push delivery padded to `size` bytes with realistic commits."""
    commits = []
    body = b""
    while True:
        commits.append(
            {
                "id": uuid.uuid4().hex + "abcdef12",
                "message": "Change the thing " * 6,
                "timestamp": "2026-12-01T10:00:00Z",
                "author": {"name": "Octo Cat", "email": "octocat@example.com"},
                "added": ["src/a.py"],
                "removed": [],
                "modified": ["README.md", "src/b.py"],
            }
        )
        payload = {
            "ref": "refs/heads/main",
            "before": "0" * 40,
            "after": "1" * 40,
            "commits": commits,
            "repository": {"id": 1, "full_name": "octo/repo", "private": False},
            "installation": {"id": 42},
            "sender": {"login": "octocat", "type": "User"},
        }
        candidate = json.dumps(payload).encode()
        if len(candidate) > size:
            return body.ljust(size) if body else candidate
        body = candidate


def ensure_wrk() -> str | None:
    """wrk's path, installing Debian's package when missing and root."""
    found = shutil.which("wrk")
    if found or os.geteuid() != 0 or not shutil.which("apt-get"):
        return found
    print("installing wrk (apt-get install wrk)", flush=True)
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    if subprocess.run(
        ["apt-get", "install", "-y", "wrk"], env=env, check=False, **quiet
    ).returncode:
        subprocess.run(["apt-get", "update"], env=env, check=False, **quiet)
        subprocess.run(["apt-get", "install", "-y", "wrk"], env=env, check=False, **quiet)
    return shutil.which("wrk")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_up(port: int, proc: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + START_SECONDS
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError("server exited during start")
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=1)
            conn.request("GET", "/healthz")
            resp = conn.getresponse()
            resp.read()
            conn.close()
            if resp.status == 200:  # ready to store, not merely listening
                return
            time.sleep(0.05)
        except OSError:
            time.sleep(0.05)
    raise TimeoutError("server did not start")


@contextmanager
def server(cmd: list[str], port: int, env: dict[str, str]) -> Iterator[subprocess.Popen[bytes]]:
    proc = subprocess.Popen(
        cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
    )
    try:
        wait_up(port, proc)
        yield proc
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)


def session_cpu(session: int) -> tuple[float, float, float]:
    """CPU seconds used so far by the processes of a session: (the gunicorn
    master and HTTP processes, the intake process, the delivery worker
    process); zeros where there is no /proc."""
    tick = os.sysconf("SC_CLK_TCK")
    used_by = {"http": 0, "intake": 0, "worker": 0}
    for _pid, argv, fields in session_members(session):
        kind = next((k for k in ("intake", "worker") if k.encode() in argv), "http")
        used_by[kind] += int(fields[11]) + int(fields[12])
    return used_by["http"] / tick, used_by["intake"] / tick, used_by["worker"] / tick


def drive(wrk: str, port: int, body: bytes, workdir: Path, session: int) -> dict[str, float]:
    # wrk.format(nil, ...) sends the method, body and headers set here.
    lua_body = workdir / "body.lua"
    lua_body.write_text(
        f"wrk.method = 'POST'\nwrk.body = {json.dumps(body.decode())}\n"
        "wrk.headers['Content-Type'] = 'application/json'\n"
        "wrk.headers['X-GitHub-Event'] = 'push'\n"
        f"wrk.headers['X-Hub-Signature-256'] = '{sign(SECRET, body)}'\n" + LUA
    )
    cpu_before = session_cpu(session)
    out = subprocess.run(
        [
            wrk,
            f"-t{THREADS}",
            f"-c{CONNECTIONS}",
            f"-d{SECONDS}s",
            "--timeout",
            "10s",
            "-s",
            str(lua_body),
            f"http://127.0.0.1:{port}/webhooks",
            "--",
            uuid.uuid4().hex[:8],
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    cpu_after = session_cpu(session)
    line = next(x for x in out.splitlines() if x.startswith('{"requests"'))
    r = json.loads(line)
    return {
        "rate": r["requests"] / (r["micros"] / 1e6),
        "p50": r["p50"] / 1000,
        "p99": r["p99"] / 1000,
        "errors": r["errors"],
        # CPU per answer (server processes, during the run): hardly moved by
        # other work on the machine, unlike the rate and the latencies.
        "http_cpu_ms": 1000 * (cpu_after[0] - cpu_before[0]) / max(1, r["requests"]),
        "intake_cpu_ms": 1000 * (cpu_after[1] - cpu_before[1]) / max(1, r["requests"]),
        "worker_cpu_ms": 1000 * (cpu_after[2] - cpu_before[2]) / max(1, r["requests"]),
    }


def figures_line(name: str, f: dict[str, float], width: int = 28, edge: str = "HTTP") -> str:
    """One run's figures: rate, latencies, CPU per delivery of each process kind."""
    text = (
        f"{name:<{width}} {f['rate']:8.0f} deliveries/s  p50 {f['p50']:6.2f} ms"
        f"  p99 {f['p99']:6.2f} ms  CPU/delivery {edge} {f['http_cpu_ms']:4.2f}"
        f" intake {f['intake_cpu_ms']:4.2f} worker {f['worker_cpu_ms']:4.2f} ms"
    )
    if f["errors"]:
        text += f"  ({f['errors']:.0f} errors or non-2xx)"
    return text


@contextmanager
def pg_schema(url: str) -> Iterator[str]:
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


def load_setup() -> tuple[str, bytes, dict[str, str]] | None:
    """wrk, the signed body and an environment with only the secret of
    ODW's settings; None (said) when wrk cannot be had."""
    wrk = ensure_wrk()
    if wrk is None:
        print("skipped: wrk is not installed (apt-get install wrk) and cannot be installed here")
        return None
    base_env = {k: v for k, v in os.environ.items() if not k.startswith("ODW_")}
    base_env.update(ODW_WEBHOOK_SECRET=SECRET)
    return wrk, push_body(), base_env


def noop_server(port: int) -> list[str]:
    return [sys.executable, "-m", "bench.noop_server", "--port", str(port)]


def intake_process(port: int) -> list[str]:
    return [ODW, "serve", "--host", "127.0.0.1", "--port", str(port)]


def group_commit(port: int) -> list[str]:
    return [sys.executable, "-m", "bench.group_commit_serve", "--port", str(port)]


NOOP = "no-op Flask"
PROCESS = "odw serve, intake process"
IN_PROCESS = "odw serve, in-process commit"
SERVERS: dict[str, Callable[[int], list[str]]] = {
    NOOP: noop_server,
    PROCESS: intake_process,
    IN_PROCESS: group_commit,
}


def vs_noop(f: dict[str, float], noop: dict[str, float]) -> tuple[float, float]:
    """(throughput ratio, p99 ratio) to the no-op's figures of the same round."""
    return f["rate"] / noop["rate"], f["p99"] / noop["p99"]


def show(name: str, f: dict[str, float], noop: dict[str, float] | None) -> None:
    text = figures_line(name, f, width=44)
    if noop is not None:
        rate, p99 = vs_noop(f, noop)
        text += f"  | x{rate:.2f} the no-op's throughput, p99 x{p99:.2f} its p99 (goal <= 1.5x)"
    print(text, flush=True)


def spread(values: list[float]) -> str:
    """The median, and the range when there are several."""
    mid = statistics.median(values)
    if len(values) == 1:
        return f"x{mid:.2f}"
    return f"x{mid:.2f} ({min(values):.2f}-{max(values):.2f})"


def summary(label: str, rounds: list[dict[str, dict[str, float]]]) -> None:
    """Medians over the rounds of each ratio, each taken within one round."""
    print(f"{label}, {len(rounds)} round(s), medians (range):", flush=True)
    for name in (PROCESS, IN_PROCESS):
        rates = [vs_noop(r[name], r[NOOP])[0] for r in rounds]
        p99s = [vs_noop(r[name], r[NOOP])[1] for r in rounds]
        print(f"  {name:<32} throughput {spread(rates)} the no-op's, p99 {spread(p99s)} its p99")
    gains = [r[PROCESS]["rate"] / r[IN_PROCESS]["rate"] for r in rounds]
    tails = [r[IN_PROCESS]["p99"] / r[PROCESS]["p99"] for r in rounds]
    print(
        f"  intake process over in-process commit: throughput {spread(gains)}, "
        f"p99 {spread(tails)} shorter",
        flush=True,
    )


def run_round(
    wrk: str,
    label: str,
    fresh: Callable[[], AbstractContextManager[dict[str, str]]],
    workdir: Path,
    body: bytes,
) -> dict[str, dict[str, float]] | None:
    """The no-op, then each way of committing, each on a database of its own;
    None (said) when a server did not start."""
    figures: dict[str, dict[str, float]] = {}
    for name, command in SERVERS.items():
        port = free_port()
        try:
            with fresh() as env, server(command(port), port, env) as proc:
                figures[name] = drive(wrk, port, body, workdir, proc.pid)
        except (RuntimeError, TimeoutError) as exc:
            print(f"{label}: {name} {exc}; round left out", flush=True)
            return None
        show(f"{label}: {name}", figures[name], None if name == NOOP else figures[NOOP])
    return figures


def main() -> None:
    setup = load_setup()
    if setup is None:
        return
    wrk, body, base_env = setup
    shape = http_shape(Settings())
    print(
        f"wrk -t{THREADS} -c{CONNECTIONS} -d{SECONDS}s, signed {len(body)} B push, unique "
        f"delivery ids; {os.cpu_count()} cores; {ROUNDS} round(s), each the no-op and odw "
        f"committing in its intake process and in-process, all under the same gunicorn "
        f"shape ({shape[0]} process(es) x {shape[1]} threads), each on a fresh database",
        flush=True,
    )
    url = postgres_url()
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)

        @contextmanager
        def sqlite() -> Iterator[dict[str, str]]:
            yield {**base_env, "ODW_DATA_DIR": tempfile.mkdtemp(dir=workdir)}

        @contextmanager
        def postgres() -> Iterator[dict[str, str]]:
            assert url is not None
            with pg_schema(url) as scoped:
                env = {**base_env, "ODW_DATABASE_URL": scoped}
                subprocess.run([ODW, "db", "upgrade"], env=env, check=True, capture_output=True)
                yield env

        databases: dict[str, Callable[[], AbstractContextManager[dict[str, str]]]] = {
            "SQLite": sqlite
        }
        if url is None:
            print("PostgreSQL skipped: no PostgreSQL (ODW_TEST_DATABASE_URL)", flush=True)
        else:
            databases["PostgreSQL"] = postgres
        results: dict[str, list[dict[str, dict[str, float]]]] = {db: [] for db in databases}
        for _ in range(ROUNDS):
            for label, fresh in databases.items():
                figures = run_round(wrk, label, fresh, workdir, body)
                if figures is not None:
                    results[label].append(figures)
    for label, rounds in results.items():
        if rounds:
            summary(label, rounds)
