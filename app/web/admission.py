"""What the edge refuses before it holds a request's body, and how many
bytes the requests in flight may hold (issue 25).

The only body ODW accepts is a signed webhook delivery of at most 25 MB. A
request that announces a body without `X-Hub-Signature-256`, or a
`Content-Length` over the limit, is answered from its headers alone: a
client without the secret never makes the service hold a body. The gunicorn
worker (`app.web.whole_requests`) applies this as soon as the headers have
arrived; `app.web.edge` applies the same rule before it reads, so it holds
under any WSGI server. What a signed-looking request may hold is then
bounded per process by `Budget` (`ODW_HTTP_INFLIGHT_MB`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from webhooks.delivery import MAX_BODY_BYTES

REASONS = {
    200: "200 OK",
    202: "202 Accepted",
    400: "400 Bad Request",
    401: "401 Unauthorized",
    408: "408 Request Timeout",
    413: "413 Content Too Large",
    503: "503 Service Unavailable",
}

# What a refusal is called in `odw_webhook_deliveries_total{outcome}`.
OUTCOMES = {
    400: "malformed",
    401: "unauthenticated",
    408: "timeout",
    413: "too-large",
    503: "unavailable",
}


@dataclass(frozen=True)
class Refusal:
    """An answer given without the body; the connection is closed after it."""

    status: int
    error: str
    retry_after: int | None = None

    def body(self) -> bytes:
        return json.dumps({"error": self.error}, separators=(",", ":")).encode()

    def http(self) -> bytes:
        """The whole HTTP/1.1 response, as the event loop writes it."""
        body = self.body()
        head = [
            f"HTTP/1.1 {REASONS[self.status]}",
            "Connection: close",
            "Content-Type: application/json",
            f"Content-Length: {len(body)}",
        ]
        if self.retry_after is not None:
            head.append(f"Retry-After: {self.retry_after}")
        return ("\r\n".join(head) + "\r\n\r\n").encode() + body


TIMEOUT = Refusal(408, "request not received in time")
BUSY = Refusal(503, "too many request bytes in flight; retry shortly", retry_after=1)
CROWDED = Refusal(503, "too many connections still sending a request; retry shortly", 1)


def too_large(max_body: int = MAX_BODY_BYTES) -> Refusal:
    return Refusal(413, f"body larger than {max_body} bytes")


def refuse_before_body(
    signature: str | bytes | None, length: int | None, max_body: int = MAX_BODY_BYTES
) -> Refusal | None:
    """The refusal a request earns from its headers, or None.

    `length` is the declared Content-Length, 0 for a request without a
    body, None when the body's size is not known in advance (chunked)."""
    if length != 0 and not signature:
        return Refusal(
            401, "X-Hub-Signature-256 is missing: only a signed delivery may send a body"
        )
    if length is not None and length > max_body:
        return too_large(max_body)
    return None


class Budget:
    """The bytes one process's requests in flight may hold together. Used
    only from the worker's event loop thread, so it needs no lock."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.used = 0

    def take(self, n: int) -> bool:
        """Reserve `n` more bytes; False (and nothing reserved) past the cap."""
        if self.used + n > self.cap:
            return False
        self.used += n
        return True

    def give(self, n: int) -> None:
        self.used -= n
