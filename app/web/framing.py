"""How much of one HTTP/1.1 request is buffered, read without blocking by
the HTTP worker's event loop (`app.web.whole_requests`): when it is whole,
what its headers declare, and what it will hold."""

from __future__ import annotations

from webhooks.delivery import MAX_BODY_BYTES

BODY_CAP = MAX_BODY_BYTES
HEADER_CAP = 1 << 17  # beyond gunicorn's own limits: its parser refuses them


class RequestFraming:
    """How much of one HTTP/1.1 request is buffered: `feed` returns True once
    the request is complete, or past the body cap (`too_large`: the worker
    answers 413), or malformed (gunicorn's parser then answers it from the
    buffer)."""

    def __init__(self, body_cap: int = BODY_CAP) -> None:
        self.buf = bytearray()
        self.body_cap = body_cap
        self.body_start = -1
        self.length: int | None = None
        self.chunked = False
        self.chunk_pos = 0
        self.decoded = 0
        self.too_large = False
        self.wants_continue = False
        self.signature: bytes | None = None

    @property
    def head_done(self) -> bool:
        return self.body_start >= 0

    def declared(self) -> int | None:
        """The body's size as the headers give it: None when chunked, 0 when
        there is no body (`app.web.admission.refuse_before_body`)."""
        if self.chunked:
            return None
        return self.length or 0

    def expected(self) -> int:
        """The bytes this request will hold once whole, as far as known now:
        what is buffered, or the headers and the declared body if more."""
        if self.length is None or self.body_start < 0:
            return len(self.buf)
        return max(len(self.buf), self.body_start + self.length)

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
        self.too_large = self.length > self.body_cap
        return self.too_large or len(self.buf) - self.body_start >= self.length

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
            elif key == b"x-hub-signature-256":
                self.signature = value
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
            # Past the cap by data actually received, never by a size merely
            # announced: a thread must find everything it reads buffered.
            received = min(size, max(0, len(self.buf) - data_start))
            if self.decoded + received > self.body_cap:
                self.too_large = True
                return True
            if len(self.buf) < data_start + size + 2:
                return False
            self.decoded += size
            self.chunk_pos = data_start + size + 2
