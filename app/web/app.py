"""`create_app(settings)`: the webhook edge, the operator endpoints and the dashboard.

`POST /webhooks` is served by `app.web.edge` in front of Flask; it only
reads, verifies, checks and stores. Every decision and every GitHub call
happens later in a worker.
"""

from __future__ import annotations

import logging
from typing import Any

from flask import Flask, Response, jsonify

from app.service_settings import Settings
from app.store import Store
from app.web import dashboard, metrics
from app.web.admin import guard_operator_endpoints
from app.web.edge import WebhookEdge
from app.web.health import health
from app.web.intake import Intake
from app.web.intake.group_commit import GroupCommit
from webhooks.delivery import MAX_BODY_BYTES

log = logging.getLogger("odw.web")


def _error(status: int, message: str) -> tuple[Response, int]:
    return jsonify({"error": message}), status


def create_app(
    settings: Settings,
    store: Store | None = None,
    *,
    intake: Intake | None = None,
    worker_required: bool = False,
    github: str = "not configured",
) -> Flask:
    """The Flask app; `store` defaults to the settings' database (schema must
    already be current: `odw serve` migrates before forking workers).
    Deliveries are stored through `intake`: by default a writer thread in
    this process; `odw serve` passes the client of its intake process, says
    whether it runs delivery workers, and what GitHub answered at start
    (`app.web.health`)."""
    settings.require_webhook_secret()
    secrets = settings.webhook_secrets()
    db = store if store is not None else Store.open(settings.database, migrate_schema=False)

    app = Flask("odw")
    guard_operator_endpoints(app, settings.admin_token_value())
    # Werkzeug refuses longer bodies before reading them, chunked ones included.
    app.config["MAX_CONTENT_LENGTH"] = MAX_BODY_BYTES
    app.extensions["odw_store"] = db
    dashboard.register(app, db, settings.admin_token_value())
    intake = intake or GroupCommit(db.inbox)
    app.wsgi_app = WebhookEdge(app.wsgi_app, secrets, intake)  # type: ignore[method-assign]

    @app.errorhandler(413)
    def too_large(_exc: Any) -> tuple[Response, int]:
        return _error(413, f"body larger than {MAX_BODY_BYTES} bytes")

    @app.get("/healthz")
    def healthz() -> tuple[Response, int]:
        body, status = health(db, intake, worker_required=worker_required, github=github)
        return jsonify(body), status

    @app.get("/metrics")
    def prometheus() -> Response:
        return Response(metrics.render(db), content_type=metrics.CONTENT_TYPE)

    @app.get("/api/deliveries/<delivery_id>")
    def delivery_status(delivery_id: str) -> tuple[Response, int]:
        found = db.inbox.get(delivery_id)
        if found is None:
            return _error(404, f"no delivery {delivery_id}")
        return jsonify(found.to_api()), 200

    return app
