"""The HTTP edge under gunicorn, over real sockets, against what issue 25
found: unsigned bodies held in memory, an unbounded number of half-open
connections, and no bound on the bytes requests in flight hold."""

from __future__ import annotations

import contextlib
import re
import resource
import select
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests import needs
from tests.service.live import request, running_service
from tests.webhooks import oracle

pytestmark = pytest.mark.slow

SECRET = "admission-secret"
FAKE_SIGNATURE = "sha256=" + "0" * 64  # present, so only the body can disprove it
HALF_OPEN = 1_100
UPLOADS = 40
UPLOAD_BYTES = 24_000_000
MB = 1_000_000


def head(length: int | None, *, signature: str | None, expect: bool = False) -> bytes:
    """The headers of a push delivery's POST, with or without a signature."""
    lines = [
        "POST /webhooks HTTP/1.1",
        "Host: odw",
        "Content-Type: application/json",
        "X-GitHub-Event: push",
        "X-GitHub-Delivery: d-1",
    ]
    lines.append("Transfer-Encoding: chunked" if length is None else f"Content-Length: {length}")
    if signature is not None:
        lines.append(f"X-Hub-Signature-256: {signature}")
    if expect:
        lines.append("Expect: 100-continue")
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def answer(sock: socket.socket, timeout: float = 5.0) -> bytes:
    """The server's answer: read until it is whole or the server closes, or
    what arrived within `timeout`."""
    sock.settimeout(timeout)
    got = b""
    try:
        while chunk := sock.recv(65536):
            got += chunk
            top, sep, body = got.partition(b"\r\n\r\n")
            length = [ln for ln in top.lower().split(b"\r\n") if ln.startswith(b"content-length:")]
            if sep and length and len(body) >= int(length[0].split(b":")[1]):
                break
    except TimeoutError:
        pass
    return got


def status(reply: bytes) -> int:
    return int(reply.split(b" ", 2)[1]) if reply.startswith(b"HTTP/1.1 ") else 0


def readable(sock: socket.socket) -> bool:
    """Whether the server has sent something (or closed) already; poll, as
    descriptors past 1,024 are out of select's range."""
    poller = select.poll()
    poller.register(sock, select.POLLIN)
    return bool(poller.poll(0))


def connect(port: int) -> socket.socket:
    return socket.create_connection(("127.0.0.1", port), timeout=10)


def service_pids(master: int) -> list[int]:
    """`odw serve` and every process under it (HTTP workers, intake, workers)."""
    pids, todo = [], [master]
    while todo:
        pid = todo.pop()
        pids.append(pid)
        for task in Path(f"/proc/{pid}/task").iterdir():
            todo += map(int, (task / "children").read_text().split())
    return pids


def memory_kb(pid: int, field: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise AssertionError(f"no {field} for {pid}")


def unsigned_upload(port: int, body: bytes, go: threading.Barrier, out: list[int]) -> None:
    """Send the whole body as a client does, then read the answer."""
    with connect(port) as sock:
        go.wait()
        # Answered and closed before the end: the answer is still readable.
        with contextlib.suppress(OSError):
            sock.sendall(head(len(body), signature=None) + body)
        out.append(status(answer(sock, timeout=30)))


def test_forty_unsigned_24_mb_uploads_add_under_100_mb_to_the_service(tmp_path: Path) -> None:
    env = {"ODW_WORKERS": "0", "ODW_HTTP_PROCESSES": "1"}
    with running_service(tmp_path, SECRET, tmp_path / "serve.log", **env) as (port, proc):
        pids = service_pids(proc.pid)
        for pid in pids:  # VmHWM := VmRSS, so VmHWM below is the peak from here on
            Path(f"/proc/{pid}/clear_refs").write_text("5")
        before = sum(memory_kb(pid, "VmRSS") for pid in pids)
        body = b"{" + b" " * (UPLOAD_BYTES - 2) + b"}"
        go = threading.Barrier(UPLOADS)
        statuses: list[int] = []
        clients = [
            threading.Thread(target=unsigned_upload, args=(port, body, go, statuses))
            for _ in range(UPLOADS)
        ]
        for c in clients:
            c.start()
        for c in clients:
            c.join(timeout=60)
        peak = sum(memory_kb(pid, "VmHWM") for pid in pids)
        assert request(port, "GET", "/healthz")[0] == 200
    assert statuses == [401] * UPLOADS
    assert (peak - before) * 1024 < 100 * MB, f"the service grew by {(peak - before) // 1024} MB"


def test_a_missing_signature_and_an_over_limit_length_are_answered_before_the_body(
    tmp_path: Path,
) -> None:
    with running_service(tmp_path, SECRET, tmp_path / "serve.log", ODW_WORKERS="0") as (port, _):
        with connect(port) as sock:
            sock.sendall(head(UPLOAD_BYTES, signature=None))
            unsigned = answer(sock)
        with connect(port) as sock:
            sock.sendall(head(None, signature=None) + b"10\r\n")  # chunked: no length at all
            unsigned_chunked = answer(sock)
        with connect(port) as sock:
            sock.sendall(head(25_000_001, signature=FAKE_SIGNATURE))
            too_long = answer(sock)
        # A delivery that does send its body (with or without Expect) is served.
        body, headers = oracle.signed(SECRET, "star", {"action": "created"}, "after-refusals")
        assert request(port, "POST", "/webhooks", body, headers)[0] == 202
    # Answered without a byte of body: the server did not wait for it.
    assert status(unsigned) == 401, unsigned
    assert b"X-Hub-Signature-256 is missing" in unsigned
    assert b"Connection: close" in unsigned
    assert status(unsigned_chunked) == 401, unsigned_chunked
    assert status(too_long) == 413, too_long
    assert b"body larger than 25000000 bytes" in too_long


@contextmanager
def open_files(needed: int) -> Iterator[None]:
    """This process (and the service it starts, which inherits it) may
    open `needed` files; the soft limit is restored after."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft >= needed:
        yield
        return
    if hard != resource.RLIM_INFINITY and hard < needed:
        needs.unavailable(needs.open_files(needed, hard))
    resource.setrlimit(resource.RLIMIT_NOFILE, (needed, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def test_1100_half_open_connections_leave_healthz_and_signed_deliveries_answering(
    tmp_path: Path,
) -> None:
    # One HTTP process, its 1,000 worker_connections, and a header timeout
    # far longer than the test: only the bound on connections being read
    # (250, the oldest closed for a new one) keeps the slots free.
    env = {"ODW_WORKERS": "0", "ODW_HTTP_PROCESSES": "1", "ODW_HTTP_HEADER_TIMEOUT": "60"}
    with (
        open_files(HALF_OPEN + 512),
        running_service(tmp_path, SECRET, tmp_path / "serve.log", **env) as (port, _),
    ):
        held: list[socket.socket] = []
        try:
            for _ in range(HALF_OPEN):
                sock = connect(port)
                sock.sendall(b"POST /webhooks HTTP/1.1\r\nHost: odw\r\n")  # and no more
                held.append(sock)
            # Without the bound these requests wait for a slot forever; the
            # timeouts only catch that, not a slow machine.
            for i in range(5):
                assert request(port, "GET", "/healthz", timeout=10)[0] == 200
                body, headers = oracle.signed(SECRET, "star", {"action": "created"}, f"held-{i}")
                assert request(port, "POST", "/webhooks", body, headers, timeout=10)[0] == 202
            # The service closed the half-open connections it could not keep.
            closed = [s for s in held if readable(s)]
            assert len(closed) >= HALF_OPEN - 250
            assert status(answer(closed[0])) == 503
        finally:
            for sock in held:
                sock.close()
    # Said once in the log, not once per connection.
    log = (tmp_path / "serve.log").read_text()
    assert re.search(r"refused at the edge: \d+ x 503 too many connections still sending", log)
    assert log.count("refused at the edge") < 10


def test_idle_kept_alive_connections_are_bounded_too(tmp_path: Path) -> None:
    """Complete requests that keep their connections idle cannot fill the
    slots either: past a quarter of them, an answer closes its connection."""
    env = {"ODW_WORKERS": "0", "ODW_HTTP_PROCESSES": "1"}
    with (
        open_files(1_024),
        running_service(tmp_path, SECRET, tmp_path / "serve.log", **env) as (port, _),
    ):
        kept: list[socket.socket] = []
        closed = 0
        try:
            for _ in range(400):
                sock = connect(port)
                sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: odw\r\n\r\n")
                reply = answer(sock)
                assert status(reply) == 200, reply
                if b"\r\nconnection: close\r\n" in reply.lower():
                    closed += 1
                    sock.close()
                else:
                    kept.append(sock)
            assert request(port, "GET", "/healthz", timeout=3)[0] == 200
        finally:
            for sock in kept:
                sock.close()
    # 250, give or take the requests a thread answered before the previous
    # connection was counted as kept.
    assert len(kept) < 300
    assert closed > 100


def test_headers_not_complete_within_the_header_timeout_get_408_and_a_body_does_not(
    tmp_path: Path,
) -> None:
    env = {"ODW_WORKERS": "0", "ODW_HTTP_HEADER_TIMEOUT": "1", "ODW_HTTP_READ_TIMEOUT": "30"}
    with running_service(tmp_path, SECRET, tmp_path / "serve.log", **env) as (port, _):
        body, headers = oracle.signed(SECRET, "star", {"action": "created"}, "slow-body")
        lines = "".join(f"{k}: {v}\r\n" for k, v in headers.items())
        start = f"POST /webhooks HTTP/1.1\r\nHost: odw\r\nContent-Length: {len(body)}\r\n"
        with connect(port) as heading, connect(port) as sending:
            started = time.monotonic()
            heading.sendall(start.encode())  # headers never finished
            sending.sendall(f"{start}{lines}\r\n".encode() + body[:1])  # headers done
            timed_out = answer(heading, timeout=10)
            took = time.monotonic() - started
            # Past the header timeout, the request sending its body is still open
            # and is served once the rest arrives.
            assert not readable(sending)
            sending.sendall(body[1:])
            served = answer(sending, timeout=10)
    assert status(timed_out) == 408, timed_out
    assert took < 5, f"408 after {took:.1f}s"
    assert status(served) == 202, served


def expect_continue(port: int, length: int) -> tuple[socket.socket, bytes]:
    """Headers of a signed-looking delivery with `Expect: 100-continue`; the
    socket and the server's first answer (`100 Continue` once the request
    holds its place in the budget)."""
    sock = connect(port)
    sock.sendall(head(length, signature=FAKE_SIGNATURE, expect=True))
    sock.settimeout(5)
    return sock, sock.recv(4096)


def test_past_the_in_flight_budget_a_request_is_503_at_once(tmp_path: Path) -> None:
    env = {"ODW_WORKERS": "0", "ODW_HTTP_PROCESSES": "1", "ODW_HTTP_INFLIGHT_MB": "26"}
    with running_service(tmp_path, SECRET, tmp_path / "serve.log", **env) as (port, _):
        first, reply = expect_continue(port, 20 * MB)  # 20 of the 26 MB, held
        assert reply.startswith(b"HTTP/1.1 100 Continue"), reply
        second, refused = expect_continue(port, 20 * MB)
        second.close()
        # A chunked body is counted as it arrives: refused once past the budget.
        with connect(port) as chunked:
            chunked.sendall(head(None, signature=FAKE_SIGNATURE))
            sent = 0
            try:
                while sent < 26 * MB and not readable(chunked):
                    chunked.sendall(b"%x\r\n%s\r\n" % (MB, b" " * MB))
                    sent += MB
            except OSError:
                pass
            counted = answer(chunked)
        # What fits still goes through.
        body, headers = oracle.signed(SECRET, "star", {"action": "created"}, "fits")
        assert request(port, "POST", "/webhooks", body, headers)[0] == 202
        first.close()
        # Once the held request is gone its bytes are free again.
        deadline = time.monotonic() + 10
        while True:
            again, reply = expect_continue(port, 20 * MB)
            again.close()
            if reply.startswith(b"HTTP/1.1 100 Continue") or time.monotonic() > deadline:
                break
            time.sleep(0.05)
        # A request answered gives its bytes back: three of 10 MB, one after another.
        for i in range(3):
            payload = {"action": "created", "padding": "x" * (10 * MB)}
            body, headers = oracle.signed(SECRET, "star", payload, f"big-{i}")
            assert request(port, "POST", "/webhooks", body, headers)[0] == 202
    assert status(refused) == 503, refused
    assert b"Retry-After: 1" in refused
    assert status(counted) == 503, counted
    assert reply.startswith(b"HTTP/1.1 100 Continue"), reply
