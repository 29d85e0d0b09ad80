"""Peak memory for one delivery: a typical 8 KB push beside the worst 25 MB
bodies, each sent signed to a fresh `odw serve` (SQLite, defaults) and
followed until the worker has finished with it. Printed per process: the
HTTP process (reads, checks, hands over), the intake process (stores) and
the delivery worker process (parses, types, handles), as peak RSS (VmHWM).

Worst cases: values are capped (webhooks.delivery.MAX_VALUES), so the worst
accepted body is one with the most expensive values allowed (empty objects,
about 70 bytes of memory per 3 bytes of JSON) plus a padding string; one
4-byte character in the padding makes Python hold the text at 4 bytes per
character. The refused case is the body from issue 11 (tiny lists).
"""

from __future__ import annotations

import http.client
import json
import os
import secrets
import sys
import tempfile
import time
from pathlib import Path

from bench.bench_webhooks import SECRET, free_port, push_body, server
from webhooks.delivery import MAX_BODY_BYTES, MAX_VALUES
from webhooks.signature import sign

ODW = str(Path(sys.executable).with_name("odw"))
ADMIN = secrets.token_hex(16)
SIZE = MAX_BODY_BYTES - 1000


def padded(values: str, pad_char: str) -> bytes:
    head = '{"ref":"refs/heads/main","before":"' + "0" * 40 + '","after":"' + "1" * 40 + '",'
    head += '"installation":{"id":42},"values":' + values + ',"padding":"'
    room = SIZE - len(head.encode()) - 2
    pad = pad_char + "x" * (room - len(pad_char.encode()))
    return (head + pad + '"}').encode()


def bodies() -> list[tuple[str, bytes]]:
    objects = "[" + ",".join(["{}"] * (MAX_VALUES - 1000)) + "]"
    tiny_lists = b'{"values":[' + b"[]," * ((SIZE - 20) // 3) + b"[]]}"
    return [
        ("typical: 8 KB push", push_body()),
        ("25 MB, tiny lists (refused 400)", tiny_lists),
        ("25 MB, 999k objects + padding", padded(objects, "x")),
        ("25 MB, same, one 4-byte char", padded(objects, "\U0001f600")),
    ]


def peak_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    return 0


def processes(master: int) -> dict[str, int]:
    """The pids of `odw serve`'s HTTP worker, intake and delivery worker
    processes, by name."""
    children = Path(f"/proc/{master}/task/{master}/children").read_text().split()
    found: dict[str, int] = {}
    for pid in map(int, children):
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        kind = next((k for k in ("intake", "worker") if k.encode() in argv), "http")
        found[kind] = pid
    assert "http" in found
    return found


def send(port: int, body: bytes, delivery_id: str) -> int:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    headers = {
        "Content-Type": "application/json",
        "X-GitHub-Event": "push",
        "X-GitHub-Delivery": delivery_id,
        "X-Hub-Signature-256": sign(SECRET, body),
    }
    conn.request("POST", "/webhooks", body=body, headers=headers)
    resp = conn.getresponse()
    resp.read()
    return resp.status


def finished(port: int, delivery_id: str, timeout: float = 120) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        # /api/* answers only the admin token (404 when none is configured).
        conn.request(
            "GET", f"/api/deliveries/{delivery_id}", headers={"Authorization": f"Bearer {ADMIN}"}
        )
        resp = conn.getresponse()
        data = resp.read()
        if resp.status == 200 and json.loads(data)["status"] not in ("received", "processing"):
            return str(json.loads(data)["status"])
        time.sleep(0.1)
    return "unfinished"


def main() -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ODW_")}
    env.update(ODW_WEBHOOK_SECRET=SECRET, ODW_ADMIN_TOKEN=ADMIN, ODW_LOG_LEVEL="WARNING")
    print("peak RSS (VmHWM) of each process of a fresh `odw serve` after one delivery")
    for name, body in bodies():
        with tempfile.TemporaryDirectory() as tmp:
            port = free_port()
            cmd = [ODW, "serve", "--host", "127.0.0.1", "--port", str(port)]
            with server(cmd, port, {**env, "ODW_DATA_DIR": tmp}) as proc:
                time.sleep(1.0)  # the delivery worker process has started
                pids = processes(proc.pid)
                idle = peak_kb(pids["http"])
                status = send(port, body, "memory")
                outcome = finished(port, "memory") if status == 202 else f"HTTP {status}"
                peaks = {kind: peak_kb(pid) / 1024 for kind, pid in pids.items()}
        print(
            f"{name:<34} {len(body) / 1e6:6.2f} MB  {outcome:<10} HTTP process "
            f"{peaks['http']:6.0f} MB (idle {idle / 1024:.0f})  intake process "
            f"{peaks.get('intake', 0):6.0f} MB  worker process {peaks.get('worker', 0):6.0f} MB",
            flush=True,
        )
