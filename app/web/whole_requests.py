"""A gunicorn gthread worker whose threads only ever see whole requests.

Stock gthread hands a connection to a request thread as soon as its first
bytes arrive, and the thread then blocks reading the rest: a few clients
sending one byte a second hold every thread, and `/healthz` with them
(slowloris). Here the worker's event loop reads each request (headers and
body) without blocking and gives it to a thread only once it is complete. A
slow client costs a buffer, never a thread. What the reading may cost is
bounded three ways (issue 25):

- Time: the headers within `ODW_HTTP_HEADER_TIMEOUT` seconds, the whole
  request within `ODW_HTTP_READ_TIMEOUT`, from its first byte; else 408.
- Connections: at most a quarter of gunicorn's `worker_connections` are
  being read at once. A new connection past that closes the oldest still
  being read (a refused one first, then one without its headers, then one
  sending its body) with a 503, so half-open connections never hold the
  slots `/healthz` and signed deliveries need. Idle kept-alive connections
  are bounded the same (past the bound an answer closes its connection).
- Bytes: a request that announces a body without a signature, or a
  `Content-Length` over the limit, is answered from its headers
  (`app.web.admission`); every other request reserves its declared size,
  or what it has sent so far when chunked, in the process's
  `ODW_HTTP_INFLIGHT_MB` budget until its answer is written, and past the
  budget is answered 503 at once.

A chunked body is refused (413) as soon as more than 25 MB of it has
arrived. A refused connection is half-closed and what the client still
sends is read and dropped for a moment, so it reads the answer rather than
a reset.
"""

from __future__ import annotations

import contextlib
import logging
import os
import selectors
import socket
import time
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from gunicorn.workers.gthread import TConn, ThreadWorker

from app.metrics import WEBHOOK_DELIVERIES
from app.web.admission import (
    BUSY,
    CROWDED,
    OUTCOMES,
    TIMEOUT,
    Budget,
    Refusal,
    refuse_before_body,
    too_large,
)
from app.web.framing import RequestFraming

RECV_SIZE = 1 << 18
CONTINUE = b"HTTP/1.1 100 Continue\r\n\r\n"


class _TimedSocket:
    """A connection's socket as gunicorn's request threads use it: where they
    make it blocking, each operation blocks for at most `timeout` seconds, so
    a client that stops reading its answer cannot hold a thread either."""

    def __init__(self, sock: socket.socket, timeout: float) -> None:
        self._sock = sock
        self._timeout = timeout

    def setblocking(self, flag: bool) -> None:
        if flag:
            self._sock.settimeout(self._timeout)
        else:
            self._sock.setblocking(False)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._sock, name)


HEAD, BODY, DRAIN = "head", "body", "drain"
GONE = "gone"  # handed to a thread, or closed: a stale poller event is ignored
REPORT_EVERY = 10.0  # seconds between log lines counting refusals


@dataclass(eq=False)
class _Reading:
    """A connection the event loop is reading: its request's headers
    (`HEAD`), its body (`BODY`), or what follows a refusal (`DRAIN`)."""

    conn: TConn
    started: float
    deadline: float
    phase: str = HEAD
    framing: RequestFraming = field(default_factory=RequestFraming)
    held: int = 0  # bytes reserved in the budget
    registered: bool = False


def worker_class(
    read_timeout: float, header_timeout: float, inflight_bytes: int
) -> type[WholeRequestWorker]:
    """The worker class for gunicorn's `worker_class`, with its limits."""
    return type(
        "OdwWorker",
        (WholeRequestWorker,),
        {
            "read_timeout": read_timeout,
            "header_timeout": min(header_timeout, read_timeout),
            "inflight_bytes": inflight_bytes,
        },
    )


class WholeRequestWorker(ThreadWorker):  # type: ignore[misc]
    """gthread, with requests read whole by the event loop (see module doc)."""

    read_timeout = 30.0
    header_timeout = 5.0
    inflight_bytes = 64_000_000

    def init_process(self) -> None:
        # Eviction order: refused connections, then headers, then bodies;
        # each dict keeps its connections oldest first.
        self.waiting: dict[str, dict[TConn, _Reading]] = {DRAIN: {}, HEAD: {}, BODY: {}}
        self.reading_limit = max(1, self.worker_connections // 4)
        # Idle kept-alive connections too: past this many, an answer closes
        # its connection (gunicorn's own check), so together they never fill
        # worker_connections and new connections are always accepted.
        self.max_keepalived = min(
            self.cfg.worker_connections - self.cfg.threads, self.reading_limit
        )
        self.next_deadline = float("inf")
        self.budget = Budget(self.inflight_bytes)
        self.held_by: dict[TConn, int] = {}  # requests handed to a thread
        self.refused: dict[str, int] = {}  # since the last report
        self.reported = float("-inf")
        super().init_process()

    def run(self) -> None:
        super().run()
        # Stopped: no request is in flight (gthread waited for them, within
        # the graceful timeout). Exit now rather than through the
        # interpreter's teardown, whose garbage collection after a burst
        # took seconds of the stop's budget (`app.web.server.STOP_SECONDS`).
        self.tpool.shutdown(wait=True)
        logging.shutdown()
        os._exit(0)

    def reading_count(self) -> int:
        return sum(len(w) for w in self.waiting.values())

    def enqueue_req(self, conn: TConn) -> None:
        if self.cfg.is_ssl or conn.is_http2:
            super().enqueue_req(conn)
            return
        if not isinstance(conn.sock, _TimedSocket):
            conn.sock = _TimedSocket(conn.sock, self.read_timeout)
        while self.reading_count() >= self.reading_limit:
            self._evict_oldest()
        now = time.monotonic()
        pending = _Reading(conn, now, now + self.header_timeout)
        self._wait(pending, HEAD, pending.deadline)
        conn.sock.setblocking(False)
        leftover = conn.parser.unreader.take_buffered() if conn.parser is not None else b""
        if leftover and not self._receive(pending, leftover):
            return
        # Usually the whole request is already here: take it without a trip
        # through the poller.
        try:
            data = conn.sock.recv(RECV_SIZE)
        except (BlockingIOError, InterruptedError):
            data = None
        except OSError:
            data = b""
        if data is not None and not self._receive(pending, data):
            return
        pending.registered = True
        self.poller.register(conn.sock, selectors.EVENT_READ, partial(self._on_bytes, pending))

    def _on_bytes(self, pending: _Reading, _sock: Any) -> None:
        if pending.phase == GONE:
            return  # closed earlier in the same batch of events
        try:
            data = pending.conn.sock.recv(RECV_SIZE)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            data = b""
        self._receive(pending, data)

    def _receive(self, pending: _Reading, data: bytes) -> bool:
        """Take `data` from the connection; True while it is still being read."""
        if not data:
            self._drop(pending)
            return False
        if pending.phase == DRAIN:
            return True  # dropped unread: the answer is already written
        framing = pending.framing
        had_headers = framing.head_done
        done = framing.feed(data)
        if framing.head_done and not had_headers:
            refusal = refuse_before_body(framing.signature, framing.declared())
            if refusal is not None:
                self._refuse(pending, refusal)
                return False
            self._wait(pending, BODY, pending.started + self.read_timeout)
        if not self._hold(pending):
            self._refuse(pending, BUSY)
            return False
        if framing.too_large:
            self._refuse(pending, too_large(framing.body_cap))
            return False
        if done:
            self._dispatch(pending)
            return False
        if framing.wants_continue and not had_headers:
            self._send(pending, CONTINUE)
        return True

    def _hold(self, pending: _Reading) -> bool:
        """Reserve what the request will hold, as far as it is known now."""
        more = pending.framing.expected() - pending.held
        if more <= 0:
            return True
        if not self.budget.take(more):
            return False
        pending.held += more
        return True

    def _release(self, pending: _Reading) -> None:
        self.budget.give(pending.held)
        pending.held = 0

    def _wait(self, pending: _Reading, phase: str, deadline: float) -> None:
        self.waiting.get(pending.phase, {}).pop(pending.conn, None)
        pending.phase = phase
        pending.deadline = deadline
        self.waiting[phase][pending.conn] = pending
        self.next_deadline = min(self.next_deadline, deadline)

    def _unwait(self, pending: _Reading) -> None:
        self.waiting.get(pending.phase, {}).pop(pending.conn, None)
        pending.phase = GONE
        if pending.registered:
            pending.registered = False
            with contextlib.suppress(KeyError, ValueError, OSError):
                self.poller.unregister(pending.conn.sock)

    def _dispatch(self, pending: _Reading) -> None:
        conn = pending.conn
        self._unwait(pending)
        self.held_by[conn] = pending.held  # until the answer is written
        conn.sock.setblocking(True)  # for the thread; bounded (see _TimedSocket)
        conn.init()
        conn.parser.unreader.unread(pending.framing.buf)
        pending.framing.buf = bytearray()  # the parser holds its own copy
        conn.data_ready = True
        super().enqueue_req(conn)

    def finish_request(self, conn: TConn, fs: Any) -> None:
        self.budget.give(self.held_by.pop(conn, 0))
        super().finish_request(conn, fs)

    def _refuse(self, pending: _Reading, refusal: Refusal) -> None:
        """Answer from what is buffered, then drop what the client still
        sends until it closes or the header timeout passes."""
        self._release(pending)
        self._count(refusal)
        pending.framing = RequestFraming()
        self._send(pending, refusal.http())
        try:
            pending.conn.sock.shutdown(socket.SHUT_WR)
        except OSError:
            self._drop(pending)
            return
        self._wait(pending, DRAIN, time.monotonic() + self.header_timeout)
        if not pending.registered:
            pending.registered = True
            self.poller.register(
                pending.conn.sock, selectors.EVENT_READ, partial(self._on_bytes, pending)
            )

    def _send(self, pending: _Reading, data: bytes) -> None:
        # A short answer fits the socket's buffer; a failed send shows up as
        # a closed socket on the next read.
        with contextlib.suppress(OSError):
            pending.conn.sock.send(data)

    def _drop(self, pending: _Reading, refusal: Refusal | None = None) -> None:
        if pending.phase == GONE:
            return
        if refusal is not None and pending.phase != DRAIN:
            self._count(refusal)
            self._send(pending, refusal.http())
        self._unwait(pending)
        self._release(pending)
        self.nr_conns -= 1
        with contextlib.suppress(OSError):
            pending.conn.sock.shutdown(socket.SHUT_RDWR)
        pending.conn.close()

    def _evict_oldest(self) -> None:
        for phase in (DRAIN, HEAD, BODY):
            if self.waiting[phase]:
                oldest = next(iter(self.waiting[phase].values()))
                self._drop(oldest, CROWDED)
                return

    def _count(self, refusal: Refusal) -> None:
        outcome = OUTCOMES.get(refusal.status, str(refusal.status))
        WEBHOOK_DELIVERIES.labels(event="unverified", outcome=outcome).inc()
        key = f"{refusal.status} {refusal.error}"
        self.refused[key] = self.refused.get(key, 0) + 1

    def murder_pending(self) -> None:
        super().murder_pending()
        now = time.monotonic()
        if self.refused and now - self.reported >= REPORT_EVERY:
            # At most one line each REPORT_EVERY seconds: an attack must not
            # flood the log.
            counts = "; ".join(f"{n} x {what}" for what, n in sorted(self.refused.items()))
            self.log.warning("refused at the edge: %s", counts)
            self.refused.clear()
            self.reported = now
        if now < self.next_deadline:
            return
        expired = [p for w in self.waiting.values() for p in w.values() if p.deadline <= now]
        for pending in expired:
            self._drop(pending, TIMEOUT)
        self.next_deadline = min(
            (p.deadline for w in self.waiting.values() for p in w.values()), default=float("inf")
        )
