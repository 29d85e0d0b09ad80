"""The HTTP edge under gunicorn, attacked over real sockets: slow clients
(slowloris) and chunked bodies past the cap."""

from __future__ import annotations

import select
import socket
import threading
import time
from pathlib import Path

import pytest

from app.store import Store
from tests.service.live import request, running_service
from tests.webhooks import oracle
from webhooks.signature import sign

pytestmark = pytest.mark.slow

SECRET = "edge-secret"
SLOW = 32
READ_TIMEOUT = 8.0


def slow_client(
    port: int, stop: threading.Event, outcome: list[bytes], connected: threading.Semaphore
) -> None:
    """Start a signed-looking POST and send it one byte every half second."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=30)
    try:
        sock.sendall(b"POST /webhooks HTTP/1.1\r\nHost: x\r\n")
        connected.release()
        for byte in b"X-GitHub-Event: push\r\nContent-Length: 10\r\n\r\n{}" * 10:
            if stop.wait(0.5) or select.select([sock], [], [], 0)[0]:
                break  # done, or the server answered
            sock.send(bytes([byte]))
        outcome.append(sock.recv(4096))
    except OSError as exc:
        outcome.append(f"{type(exc).__name__}".encode())
    finally:
        sock.close()


def test_slow_clients_hold_no_thread_and_are_cut_off_at_the_read_timeout(
    tmp_path: Path,
) -> None:
    # The header timeout (tests/service/test_live_admission.py) as long as the
    # read timeout, so this one is what cuts the slow clients off.
    env = {
        "ODW_HTTP_READ_TIMEOUT": str(READ_TIMEOUT),
        "ODW_HTTP_HEADER_TIMEOUT": str(READ_TIMEOUT),
        "ODW_WORKERS": "0",
    }
    with running_service(tmp_path, SECRET, tmp_path / "serve.log", **env) as (port, _):
        stop = threading.Event()
        outcomes: list[bytes] = []
        started = time.monotonic()
        connected = threading.Semaphore(0)
        clients = [
            threading.Thread(target=slow_client, args=(port, stop, outcomes, connected))
            for _ in range(SLOW)
        ]
        for c in clients:
            c.start()
        for _ in clients:  # every slow client is connected and trickling
            assert connected.acquire(timeout=READ_TIMEOUT), "a slow client never connected"
        body, headers = oracle.signed(SECRET, "star", {"action": "created"}, "while-slow")
        for _ in range(5):
            assert request(port, "GET", "/healthz", timeout=3)[0] == 200
        assert request(port, "POST", "/webhooks", body, headers, timeout=3)[0] == 202
        assert time.monotonic() - started < READ_TIMEOUT, "checks ran after the timeout"
        for c in clients:
            c.join(timeout=READ_TIMEOUT + 10)
        stop.set()
    assert len(outcomes) == SLOW
    # Each slow request was answered 408 (or reset) at the timeout, not served.
    assert all(b" 202 " not in o for o in outcomes)
    assert sum(o.startswith(b"HTTP/1.1 408") for o in outcomes) >= SLOW // 2, outcomes[:3]
    store = Store.open(f"sqlite:///{tmp_path / 'odw.sqlite3'}", migrate_schema=False)
    assert list(store.inbox.counts()) == [("star", "received")]
    store.close()


def chunked_post(port: int, total: int, signature: str) -> tuple[int, float]:
    """POST `total` bytes of chunked body (1 MB chunks); the status and how
    long the answer took."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=30)
    started = time.monotonic()
    try:
        sock.sendall(
            b"POST /webhooks HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n"
            b"Content-Type: application/json\r\nX-GitHub-Event: push\r\n"
            b"X-GitHub-Delivery: chunked-big\r\n"
            + f"X-Hub-Signature-256: {signature}\r\n\r\n".encode()
        )
        chunk = b"%x\r\n%s\r\n" % (1_000_000, b" " * 1_000_000)
        try:
            for _ in range(total // 1_000_000):
                sock.sendall(chunk)
            sock.sendall(b"0\r\n\r\n")
        except OSError:
            pass  # the server answered and closed before the end: expected
        reply = sock.recv(4096).decode("latin-1")
        return int(reply.split(" ", 2)[1]), time.monotonic() - started
    finally:
        sock.close()


def test_a_chunked_body_over_25_mb_is_413_and_one_under_is_accepted(tmp_path: Path) -> None:
    with running_service(tmp_path, SECRET, tmp_path / "serve.log", ODW_WORKERS="0") as (port, _):
        big = b" " * 26_000_000
        status, _took = chunked_post(port, len(big), sign(SECRET, big))
        assert status == 413
        body, headers = oracle.signed(SECRET, "star", {"action": "created"}, "chunked-small")
        del headers["X-Hub-Signature-256"]
        small = sign(SECRET, body)
        sock = socket.create_connection(("127.0.0.1", port), timeout=30)
        head = "".join(f"{k}: {v}\r\n" for k, v in headers.items())
        sock.sendall(
            f"POST /webhooks HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n{head}"
            f"X-Hub-Signature-256: {small}\r\n\r\n".encode()
            + b"%x\r\n%s\r\n0\r\n\r\n" % (len(body), body)
        )
        assert sock.recv(4096).startswith(b"HTTP/1.1 202")
        sock.close()
    store = Store.open(f"sqlite:///{tmp_path / 'odw.sqlite3'}", migrate_schema=False)
    assert store.inbox.get("chunked-big") is None
    assert store.inbox.get("chunked-small") is not None
    store.close()
