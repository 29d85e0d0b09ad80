"""Agent output as it streams: completion-marker detection and bounded capture.

Agents print arbitrary bytes in arbitrary chunks, with colours. The marker must
be found even when a write splits it or wraps it in escape sequences, and the
capture must stay a fixed size however much the agent prints.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import BinaryIO

from app.core.sanitize import strip_ansi
from app.core.verdict import completion_marker

_PREFIX = completion_marker("").encode()
_TOKEN_CHARS = rb"A-Za-z0-9_-"
_MARKER = re.compile(
    re.escape(_PREFIX) + rb"([" + _TOKEN_CHARS + rb"]{8,128})(?![" + _TOKEN_CHARS + rb"])"
)
# Complete escape sequences: CSI, OSC (BEL or ST terminated) and two-byte escapes.
_ANSI = re.compile(rb"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|[@-Z\\-_])")
# The start of an escape sequence cut off by the end of a chunk.
_PARTIAL = re.compile(rb"\x1b(?:\[[0-?]*[ -/]*|\][^\x07\x1b]*\x1b?)?\Z")
_PENDING_MAX = 4096
_CARRY = len(_PREFIX) + 129
MAX_FOREIGN = 8


class MarkerScanner:
    """Finds this attempt's marker, and notes other tokens' markers, in a byte stream."""

    def __init__(self, token: str) -> None:
        self.token = token
        self.seen = False
        self.foreign: list[str] = []
        self._pending = b""
        self._carry = b""

    def feed(self, chunk: bytes) -> None:
        data = self._pending + chunk
        self._pending = b""
        window_start = max(0, len(data) - _PENDING_MAX)
        partial = _PARTIAL.search(data, window_start)
        if partial is not None:
            self._pending = data[partial.start() :]
            data = data[: partial.start()]
        self._scan(_ANSI.sub(b"", data), final=False)

    def finish(self) -> None:
        """End of stream: a marker at the very end is now unambiguous."""
        rest, self._pending = self._pending, b""
        self._scan(_ANSI.sub(b"", rest), final=True)

    def _scan(self, clean: bytes, *, final: bool) -> None:
        window = self._carry + clean
        for m in _MARKER.finditer(window):
            if m.end() == len(window) and not final:
                continue  # the token may go on in the next chunk
            token = m.group(1).decode()
            if token == self.token:
                self.seen = True
            elif token not in self.foreign and len(self.foreign) < MAX_FOREIGN:
                self.foreign.append(token)
        self._carry = window[-_CARRY:]


class HeadTailCapture:
    """Keeps the first `head` and last `tail` bytes; the head is written as it arrives."""

    def __init__(self, head: int, tail: int, sink: BinaryIO | None = None) -> None:
        self.head_limit = head
        self.tail_limit = tail
        self.total = 0
        self._head = bytearray()
        self._tail = bytearray()
        self._sink = sink

    def feed(self, chunk: bytes) -> None:
        self.total += len(chunk)
        room = self.head_limit - len(self._head)
        if room > 0:
            part = chunk[:room]
            self._head += part
            if self._sink is not None:
                self._sink.write(part)
                self._sink.flush()
            chunk = chunk[room:]
        if chunk:
            self._tail += chunk
            if len(self._tail) > 2 * self.tail_limit:
                del self._tail[: len(self._tail) - self.tail_limit]

    @property
    def elided(self) -> int:
        return self.total - len(self._head) - min(len(self._tail), self.tail_limit)

    def finish(self) -> None:
        """Append the elision note and the tail to the sink."""
        if self._sink is None:
            return
        if self.elided > 0:
            self._sink.write(f"\n[... {self.elided} bytes elided by ODW ...]\n".encode())
        self._sink.write(bytes(self._tail[-self.tail_limit :]))
        self._sink.flush()

    def tail_text(self, limit: int) -> str:
        """The last `limit` characters printed, decoded and without escapes."""
        data = bytes(self._head) + bytes(self._tail) if self.elided <= 0 else bytes(self._tail)
        data = data[-(limit * 4 + 256) :]
        return strip_ansi(data.decode("utf-8", errors="replace"))[-limit:]


class EchoBudget:
    """Mirrors output to a stream (the job log) until a byte budget runs out."""

    def __init__(self, stream: BinaryIO, budget: int) -> None:
        self._stream = stream
        self._left = budget
        self._noted = False

    def feed(self, chunk: bytes) -> None:
        if self._left > 0:
            part = chunk[: self._left]
            self._left -= len(part)
            self._stream.write(part)
            self._stream.flush()
        elif not self._noted:
            self._noted = True
            self._stream.write(b"\n[odw: echo budget spent; head and tail are in agent.log]\n")
            self._stream.flush()


def tee(*sinks: Callable[[bytes], None]) -> Callable[[bytes], None]:
    def feed(chunk: bytes) -> None:
        for sink in sinks:
            sink(chunk)

    return feed
