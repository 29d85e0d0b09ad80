"""The HTTP processes' side of the intake socket (`process.py`).

Each request thread keeps one connection and has at most one delivery in
flight on it, so an answer always belongs to the request just sent.
"""

from __future__ import annotations

import socket
import struct
import threading

from app.store.inbox import NewDelivery
from app.web.intake.wire import DUPLICATE, NEW, PING, PONG, encode

# As long as a write may wait for SQLite's lock: past it the intake is stuck.
ANSWER_SECONDS = 30.0
READY_SECONDS = 2.0


class IntakeUnavailable(Exception):
    """The delivery was not confirmed stored: answer that nothing was accepted."""


class IntakeClient:
    """`record` over the intake socket at `path` (see `app.web.intake.Intake`)."""

    def __init__(
        self,
        path: str,
        answer_seconds: float = ANSWER_SECONDS,
        ready_seconds: float = READY_SECONDS,
    ) -> None:
        self.path = path
        self.answer_seconds = answer_seconds
        self.ready_seconds = ready_seconds
        self._local = threading.local()

    def record(self, delivery: NewDelivery) -> bool:
        frame = encode(delivery)
        sock, reused = self._socket()
        answer = self._exchange(sock, frame)
        if answer is None and reused:
            # A kept connection may predate a restart of the intake: send once
            # more on a new one. Safe: a stored id is never stored twice.
            answer = self._exchange(self._socket()[0], frame)
        if answer is None:
            raise IntakeUnavailable("the intake closed the connection before answering")
        if answer == NEW:
            return True
        if answer == DUPLICATE:
            return False
        raise IntakeUnavailable("the intake could not store the delivery")

    def ready(self) -> bool:
        """Whether the intake answers a ping within `ready_seconds`, on a
        connection of its own so no request thread's is disturbed."""
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
                sock.settimeout(self.ready_seconds)
                sock.connect(self.path)
                sock.sendall(PING)
                return sock.recv(1) == PONG
        except OSError:
            return False

    def _exchange(self, sock: socket.socket, frame: bytes) -> bytes | None:
        """The answer, or None when the connection broke (it is dropped)."""
        try:
            sock.sendall(frame)
            answer = sock.recv(1)
        except BlockingIOError:  # the kernel's time limit (see `_socket`)
            self._drop()
            raise IntakeUnavailable("the intake did not answer in time") from None
        except OSError:
            answer = b""
        if not answer:
            self._drop()
            return None
        return answer

    def _socket(self) -> tuple[socket.socket, bool]:
        sock: socket.socket | None = getattr(self._local, "sock", None)
        if sock is not None:
            return sock, True
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        # The kernel bounds each send and receive (a blocking socket with a
        # Python timeout would poll before every call: twice the system calls,
        # each giving up the interpreter lock).
        whole = int(self.answer_seconds)
        limit = struct.pack("ll", whole, int((self.answer_seconds - whole) * 1e6))
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVTIMEO, limit)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDTIMEO, limit)
        try:
            sock.connect(self.path)
        except OSError as exc:
            sock.close()
            raise IntakeUnavailable(f"cannot reach the intake: {exc.strerror or exc}") from None
        self._local.sock = sock
        return sock, False

    def _drop(self) -> None:
        sock = getattr(self._local, "sock", None)
        self._local.sock = None
        if sock is not None:
            sock.close()
