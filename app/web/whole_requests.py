"""A gunicorn gthread worker whose threads only ever see whole requests.

Stock gthread hands a connection to a request thread as soon as its first
bytes arrive, and the thread then blocks reading the rest: a few clients
sending one byte a second hold every thread, and `/healthz` with them
(slowloris). Here the worker's event loop reads each request (headers and
body) without blocking, within `ODW_HTTP_READ_TIMEOUT` seconds from its first
byte, and gives it to a thread only once it is complete. A slow client costs a
buffer, never a thread; one too slow is answered 408 and closed.

A body larger than the cap is not read in full: the request goes to the app
as soon as the cap is passed, which answers 413 from what is buffered.
"""

from __future__ import annotations

import contextlib
import selectors
import socket
import time
from collections import deque
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from gunicorn.workers.gthread import TConn, ThreadWorker

from webhooks.delivery import MAX_BODY_BYTES

# The app reads bodies in 64 KB pieces; keep that much past the cap buffered
# so it can see the cap passed without waiting on the socket.
BODY_CAP = MAX_BODY_BYTES + (1 << 18)
HEADER_CAP = 1 << 17  # beyond gunicorn's own limits: its parser refuses them
RECV_SIZE = 1 << 18
_TIMEOUT_BODY = b'{"error":"request not received in time"}'
TIMEOUT_REPLY = (
    b"HTTP/1.1 408 Request Timeout\r\nConnection: close\r\nContent-Type: application/json\r\n"
    b"Content-Length: %d\r\n\r\n%s" % (len(_TIMEOUT_BODY), _TIMEOUT_BODY)
)
CONTINUE = b"HTTP/1.1 100 Continue\r\n\r\n"


class RequestFraming:
    """How much of one HTTP/1.1 request is buffered: `feed` returns True once
    the request is complete, or past the body cap, or malformed (gunicorn's
    parser then answers it from the buffer)."""

    def __init__(self, body_cap: int = BODY_CAP) -> None:
        self.buf = bytearray()
        self.body_cap = body_cap
        self.body_start = -1
        self.length: int | None = None
        self.chunked = False
        self.chunk_pos = 0
        self.decoded = 0
        self.wants_continue = False

    def feed(self, data: bytes) -> bool:
        self.buf += data
        if self.body_start < 0:
            end = self.buf.find(b"\r\n\r\n")
            if end < 0:
                return len(self.buf) > HEADER_CAP
            if not self._read_headers(end):
                return True
        if self.chunked:
            return self._chunks_done()
        if self.length is None:
            return True
        return self.length > self.body_cap or len(self.buf) - self.body_start >= self.length

    def _read_headers(self, end: int) -> bool:
        """Note the framing; False when it is not one gunicorn would accept."""
        lines = bytes(self.buf[:end]).split(b"\r\n")
        lengths: set[bytes] = set()
        expect_at = -1
        for i, line in enumerate(lines[1:], start=1):
            name, _, value = line.partition(b":")
            key, value = name.strip().lower(), value.strip()
            if key == b"content-length":
                lengths.add(value)
            elif key == b"transfer-encoding":
                self.chunked = self.chunked or b"chunked" in value.lower()
            elif key == b"expect" and value.lower() == b"100-continue":
                expect_at = i
        if expect_at > 0 and not lines[0].endswith(b"HTTP/1.0"):
            # Answer the expectation here (the client waits for it before
            # sending the body) and drop it, so it is not answered twice.
            self.wants_continue = True
            del lines[expect_at]
            head = b"\r\n".join(lines)
            self.buf[:end] = head
            end = len(head)
        self.body_start = end + 4
        self.chunk_pos = self.body_start
        if len(lengths) > 1 or (lengths and self.chunked):
            return False
        if lengths:
            try:
                self.length = int(lengths.pop())
            except ValueError:
                return False
            if self.length < 0:
                return False
        return True

    def _chunks_done(self) -> bool:
        while True:
            line_end = self.buf.find(b"\r\n", self.chunk_pos)
            if line_end < 0:
                return len(self.buf) - self.chunk_pos > 4096
            try:
                size = int(bytes(self.buf[self.chunk_pos : line_end]).split(b";")[0], 16)
            except ValueError:
                return True
            data_start = line_end + 2
            if size == 0:
                if self.buf[data_start : data_start + 2] == b"\r\n":
                    return True
                return self.buf.find(b"\r\n\r\n", line_end) >= 0
            self.decoded += size
            if self.decoded > self.body_cap:
                return True
            if len(self.buf) < data_start + size + 2:
                return False
            self.chunk_pos = data_start + size + 2


@dataclass
class _Reading:
    conn: TConn
    deadline: float
    framing: RequestFraming = field(default_factory=RequestFraming)
    active: bool = True


def worker_class(read_timeout: float) -> type[WholeRequestWorker]:
    """The worker class for gunicorn's `worker_class`, with its read timeout."""
    return type("OdwWorker", (WholeRequestWorker,), {"read_timeout": read_timeout})


class WholeRequestWorker(ThreadWorker):  # type: ignore[misc]
    """gthread, with requests read whole by the event loop (see module doc)."""

    read_timeout = 30.0

    def init_process(self) -> None:
        self.reading: deque[_Reading] = deque()
        super().init_process()

    def enqueue_req(self, conn: TConn) -> None:
        if self.cfg.is_ssl or conn.is_http2:
            super().enqueue_req(conn)
            return
        pending = _Reading(conn, time.monotonic() + self.read_timeout)
        conn.sock.setblocking(False)
        leftover = conn.parser.unreader.take_buffered() if conn.parser is not None else b""
        if leftover and pending.framing.feed(leftover):
            self._dispatch(pending)
            return
        self.reading.append(pending)
        self.poller.register(conn.sock, selectors.EVENT_READ, partial(self._on_bytes, pending))

    def _on_bytes(self, pending: _Reading, _sock: Any) -> None:
        conn = pending.conn
        try:
            data = conn.sock.recv(RECV_SIZE)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            data = b""
        if not data:
            self._drop(pending)
            return
        framing = pending.framing
        had_headers = framing.body_start >= 0
        done = framing.feed(data)
        if framing.wants_continue and not had_headers and not done:
            try:
                conn.sock.send(CONTINUE)
            except OSError:
                self._drop(pending)
                return
        if done:
            self.poller.unregister(conn.sock)
            pending.active = False
            self._dispatch(pending)

    def _dispatch(self, pending: _Reading) -> None:
        conn = pending.conn
        conn.sock.setblocking(True)
        conn.init()
        conn.parser.unreader.unread(bytes(pending.framing.buf))
        conn.data_ready = True
        super().enqueue_req(conn)

    def _drop(self, pending: _Reading, reply: bytes = b"") -> None:
        pending.active = False
        with contextlib.suppress(KeyError, ValueError, OSError):
            self.poller.unregister(pending.conn.sock)
        if reply:
            with contextlib.suppress(OSError):
                pending.conn.sock.send(reply)
        self.nr_conns -= 1
        with contextlib.suppress(OSError):
            pending.conn.sock.shutdown(socket.SHUT_RDWR)
        pending.conn.close()

    def murder_pending(self) -> None:
        super().murder_pending()
        now = time.monotonic()
        while self.reading and (not self.reading[0].active or self.reading[0].deadline <= now):
            pending = self.reading.popleft()
            if pending.active:
                self.log.info("request not received within %ss: closed", self.read_timeout)
                self._drop(pending, TIMEOUT_REPLY)
