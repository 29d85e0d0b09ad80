"""`POST /webhooks` as plain WSGI in front of the Flask app.

The request path is: read the body (bounded), check the signature, the
bounded checks of `webhooks.delivery`, one durable insert shared with the
requests that arrive together (`app.web.intake`), answer. Flask's request and
response machinery cost more than all of that together, so this one route
does without it; every other path goes on to Flask unchanged.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterable
from typing import Any

from app.metrics import WEBHOOK_DELIVERIES
from app.store.inbox import NewDelivery
from app.web.admission import OUTCOMES, REASONS, Refusal, refuse_before_body, too_large
from app.web.intake import Intake
from app.web.intake.client import IntakeUnavailable
from webhooks.delivery import MAX_BODY_BYTES, BadDelivery, parse_delivery
from webhooks.signature import verify

log = logging.getLogger("odw.web")

WSGIApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]

_READ_CHUNK = 1 << 16


class _TooLarge(Exception):
    pass


class _Refused(Exception):
    """Answered from the headers; the body is left unread."""

    def __init__(self, refusal: Refusal) -> None:
        super().__init__(refusal.error)
        self.refusal = refusal


class WebhookEdge:
    """WSGI middleware (Flask's documented `app.wsgi_app = ...` pattern)."""

    def __init__(
        self,
        fallback: WSGIApp,
        secrets: list[str],
        intake: Intake,
        max_body: int = MAX_BODY_BYTES,
    ) -> None:
        self.fallback = fallback
        self.secrets = secrets
        self.intake = intake
        self.max_body = max_body

    def __call__(
        self, environ: dict[str, Any], start_response: Callable[..., Any]
    ) -> Iterable[bytes]:
        if environ.get("PATH_INFO") != "/webhooks" or environ.get("REQUEST_METHOD") != "POST":
            return self.fallback(environ, start_response)
        try:
            status, answer, event = self.receive(environ)
            unread = status == 413
        except _Refused as refused:
            status, answer, event = refused.refusal.status, {"error": refused.refusal.error}, None
            unread = True
        outcome = answer.get("status") or OUTCOMES.get(status, str(status))
        WEBHOOK_DELIVERIES.labels(event=event or "unverified", outcome=outcome).inc()
        body = json.dumps(answer, separators=(",", ":")).encode()
        headers = [("Content-Type", "application/json"), ("Content-Length", str(len(body)))]
        if unread:
            # The rest of the body is never read; the connection cannot be
            # reused. (gunicorn drops this header; under `odw serve` the worker
            # answers these refusals itself, before the app sees them.)
            headers.append(("Connection", "close"))
        start_response(REASONS[status], headers)
        return [body]

    def receive(self, environ: dict[str, Any]) -> tuple[int, dict[str, str], str | None]:
        """The answer, and the delivery's event once its signature and shape hold."""
        delivery_id = environ.get("HTTP_X_GITHUB_DELIVERY")
        try:
            raw = self._read_body(environ)
        except _TooLarge:
            return 413, {"error": too_large(self.max_body).error}, None
        except BadDelivery as exc:
            return 400, {"error": str(exc)}, None
        if not verify(raw, environ.get("HTTP_X_HUB_SIGNATURE_256"), self.secrets):
            log.warning("signature mismatch", extra={"delivery": delivery_id})
            return 401, {"error": "signature does not match"}, None
        try:
            d = parse_delivery(
                delivery_id, environ.get("HTTP_X_GITHUB_EVENT"), raw, environ.get("CONTENT_TYPE")
            )
        except BadDelivery as exc:
            log.warning("bad delivery: %s", exc, extra={"delivery": delivery_id})
            return 400, {"error": str(exc)}, None
        del raw
        if d.event == "ping":
            log.info("ping", extra={"delivery": d.id})
            return 200, {"id": d.id, "status": "pong"}, d.event
        try:
            new = self.intake.record(
                NewDelivery(d.id, d.event, d.action, d.installation_id, d.body)
            )
        except IntakeUnavailable as exc:
            log.error("could not store the delivery: %s", exc, extra={"delivery": d.id})
            return 503, {"error": "the delivery could not be stored; nothing was accepted"}, d.event
        except Exception:
            log.exception("could not store the delivery", extra={"delivery": d.id})
            return 503, {"error": "the delivery could not be stored; nothing was accepted"}, d.event
        if log.isEnabledFor(logging.DEBUG):
            # The inbox is the record of every receipt; the worker logs outcomes.
            action = f".{d.action}" if d.action else ""
            log.debug(
                "received %s%s", d.event, action, extra={"delivery": d.id, "duplicate": not new}
            )
        return 202, {"id": d.id, "status": "received" if new else "duplicate"}, d.event

    def _read_body(self, environ: dict[str, Any]) -> bytes:
        """The whole body; refused before reading it when the headers earn a
        refusal (`app.web.admission`), or with _TooLarge past the cap while
        a chunked body is counted."""
        stream = environ["wsgi.input"]
        declared = environ.get("CONTENT_LENGTH") or ""
        length: int | None = None
        if declared:
            try:
                length = int(declared)
            except ValueError:
                raise BadDelivery("Content-Length is not a number") from None
        refusal = refuse_before_body(environ.get("HTTP_X_HUB_SIGNATURE_256"), length, self.max_body)
        if refusal is not None:
            raise _Refused(refusal)
        if length is not None:
            body: bytes = stream.read(length) if length > 0 else b""
            if len(body) != length:
                raise BadDelivery("body shorter than its Content-Length")
            return body
        if not environ.get("wsgi.input_terminated"):
            return b""  # WSGI: no length and no terminated stream means no body
        parts: list[bytes] = []
        total = 0
        while chunk := stream.read(_READ_CHUNK):
            total += len(chunk)
            if total > self.max_body:
                raise _TooLarge
            parts.append(chunk)
        return b"".join(parts)
