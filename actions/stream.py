"""Agent output as it streams: completion-marker detection and bounded capture.

Agents print arbitrary bytes in arbitrary chunks, with colours. The marker must
be found even when a write splits it or wraps it in escape sequences, but only
on a line of its own, and the capture must stay a fixed size however much the
agent prints.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import BinaryIO

from app.core.sanitize import strip_ansi
from app.core.verdict import completion_marker

# The whole line, once ANSI escapes and surrounding whitespace are removed.
_MARKER_LINE = re.compile(re.escape(completion_marker("").encode()) + rb"([A-Za-z0-9_-]{8,128})\Z")
# Complete escape sequences: CSI, OSC (BEL or ST terminated) and two-byte escapes.
_ANSI = re.compile(rb"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|[@-Z\\-_])")
# The start of an escape sequence cut off by the end of a chunk.
_PARTIAL = re.compile(rb"\x1b(?:\[[0-?]*[ -/]*|\][^\x07\x1b]*\x1b?)?\Z")
_PENDING_MAX = 4096
# Longer content than this cannot be a marker line; a longer run of trailing
# whitespace is kept as two spaces (never one, which could forge the separator).
_LINE_MAX = len(completion_marker("")) + 128
_WS_MAX = 64
MAX_FOREIGN = 8


class MarkerScanner:
    """Finds this attempt's marker, and notes other tokens' markers, in a byte stream.

    Only a line that is nothing but the marker counts (escapes and surrounding
    whitespace aside): a marker inside an environment dump, a shell trace or a
    log line is text, not a completion.
    """

    def __init__(self, token: str) -> None:
        self.token = token
        self.seen = False
        self.foreign: list[str] = []
        self._pending = b""
        self._line = b""
        self._long = False

    def feed(self, chunk: bytes) -> None:
        data = self._pending + chunk
        self._pending = b""
        window_start = max(0, len(data) - _PENDING_MAX)
        partial = _PARTIAL.search(data, window_start)
        if partial is not None:
            self._pending = data[partial.start() :]
            data = data[: partial.start()]
        self._scan(_ANSI.sub(b"", data))

    def finish(self) -> None:
        """End of stream: the last line, even without a newline, is complete."""
        rest, self._pending = self._pending, b""
        self._scan(_ANSI.sub(b"", rest))
        self._end_line()

    def _scan(self, clean: bytes) -> None:
        *complete, last = clean.split(b"\n")
        for part in complete:
            self._add(part)
            self._end_line()
        self._add(last)

    def _add(self, part: bytes) -> None:
        if self._long:
            return
        line = (self._line + part).lstrip()
        content = line.rstrip()
        if len(content) > _LINE_MAX:
            self._long, self._line = True, b""
        elif len(line) - len(content) > _WS_MAX:
            self._line = content + b"  "
        else:
            self._line = line

    def _end_line(self) -> None:
        line, long_ = self._line.strip(), self._long
        self._line, self._long = b"", False
        m = None if long_ else _MARKER_LINE.match(line)
        if m is None:
            return
        token = m.group(1).decode()
        if token == self.token:
            self.seen = True
        elif token not in self.foreign and len(self.foreign) < MAX_FOREIGN:
            self.foreign.append(token)


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
