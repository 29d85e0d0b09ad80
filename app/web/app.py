"""`create_app(settings)`: the webhook edge and the operator endpoints.

The request path only verifies, parses and stores; every decision and every
GitHub call happens later in a worker.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from flask import Flask, Response, jsonify, request

from app.settings import Settings
from app.store import Store
from app.web import metrics
from app.web.admin import guard_operator_endpoints
from webhooks.delivery import MAX_BODY_BYTES, BadDelivery, parse_delivery
from webhooks.signature import verify

log = logging.getLogger("odw.web")


def _error(status: int, message: str) -> tuple[Response, int]:
    return jsonify({"error": message}), status


def create_app(settings: Settings, store: Store | None = None) -> Flask:
    """The Flask app; `store` defaults to the settings' database (schema must
    already be current: `odw serve` migrates before forking workers)."""
    settings.require_webhook_secret()
    secrets = settings.webhook_secrets()
    db = store if store is not None else Store.open(settings.database, migrate_schema=False)

    app = Flask("odw")
    guard_operator_endpoints(app, settings.admin_token_value())
    # Werkzeug refuses longer bodies before reading them, chunked ones included.
    app.config["MAX_CONTENT_LENGTH"] = MAX_BODY_BYTES
    app.extensions["odw_store"] = db

    @app.errorhandler(413)
    def too_large(_exc: Any) -> tuple[Response, int]:
        return _error(413, f"body larger than {MAX_BODY_BYTES} bytes")

    @app.post("/webhooks")
    def receive() -> tuple[Response, int]:
        length = request.content_length
        if length is not None and length > MAX_BODY_BYTES:
            return _error(413, f"body larger than {MAX_BODY_BYTES} bytes")
        body = request.get_data(cache=False)
        delivery_id = request.headers.get("X-GitHub-Delivery")
        if not verify(body, request.headers.get("X-Hub-Signature-256"), secrets):
            log.warning("signature mismatch", extra={"delivery": delivery_id})
            return _error(401, "signature does not match")
        try:
            d = parse_delivery(
                delivery_id, request.headers.get("X-GitHub-Event"), body, request.content_type
            )
        except BadDelivery as exc:
            log.warning("bad delivery: %s", exc, extra={"delivery": delivery_id})
            return _error(400, str(exc))
        if d.event == "ping":
            log.info("ping", extra={"delivery": d.id})
            return jsonify({"id": d.id, "status": "pong"}), 200
        stored = body if request.mimetype == "application/json" else _json_bytes(d.payload)
        new = db.inbox.record(d.id, d.event, d.action, d.installation_id, stored)
        log.info(
            "received %s%s",
            d.event,
            f".{d.action}" if d.action else "",
            extra={"delivery": d.id, "duplicate": not new},
        )
        return jsonify({"id": d.id, "status": "received" if new else "duplicate"}), 202

    @app.get("/healthz")
    def healthz() -> tuple[Response, int]:
        if db.ping():
            return jsonify({"status": "ok", "database": "ok"}), 200
        return jsonify({"status": "unavailable", "database": "unreachable"}), 503

    @app.get("/metrics")
    def prometheus() -> Response:
        return Response(metrics.render(db), mimetype="text/plain; version=0.0.4")

    @app.get("/api/deliveries/<delivery_id>")
    def delivery_status(delivery_id: str) -> tuple[Response, int]:
        found = db.inbox.get(delivery_id)
        if found is None:
            return _error(404, f"no delivery {delivery_id}")
        return jsonify(found.to_api()), 200

    return app


def _json_bytes(payload: dict[str, Any]) -> bytes:
    return json.dumps(payload, separators=(",", ":")).encode()
