"""What `/api/deliveries/<id>` shows when a handler's write is refused by the
database: a short error naming the kind of failure, never the SQL or the
payload data bound to it; the details are in the log only."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from app.service.outcome import HandlerContext
from app.service.worker import MAX_ERROR_CHARS, DeliveryWorker, WorkerConfig
from app.service_settings import Settings
from app.store import Store
from app.store.schema import github_events
from app.web.app import create_app
from tests.webhooks import oracle
from webhooks.payloads import GitHubEvent
from webhooks.router import Router

SECRET = "errors-secret"
PRIVATE = "text-from-a-private-comment"


def refused_write_router() -> Router:
    """A handler whose insert the database refuses (NOT NULL), with payload
    text among the bound parameters, as a real handler bug would."""
    router = Router()

    @router.register("star")
    def write(event: GitHubEvent, ctx: HandlerContext) -> None:
        ctx.tx.execute(
            github_events.insert().values(
                delivery_id=ctx.delivery_id,
                event=event.event,
                subject=json.dumps(event.model_dump(mode="json")),
                data=None,
                recorded_at=0.0,
            )
        )

    return router


def test_a_refused_database_write_shows_a_short_error_and_logs_the_details(
    any_store: Store, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    settings = Settings(webhook_secret=SECRET, data_dir=tmp_path, admin_token="admin")  # type: ignore[arg-type]
    app = create_app(settings, any_store)
    client = app.test_client()
    payload = {"action": PRIVATE, "sender": {"login": PRIVATE}, "installation": {"id": 7}}
    body, headers = oracle.signed(SECRET, "star", payload, "d-refused")
    assert client.post("/webhooks", data=body, headers=headers).status_code == 202

    worker = DeliveryWorker(any_store, refused_write_router(), WorkerConfig())
    with caplog.at_level(logging.ERROR, logger="odw.worker"):
        assert worker.process_one() == "failed"

    # /api/* answers only the admin token (app/web/admin.py).
    shown = client.get("/api/deliveries/d-refused", headers={"Authorization": "Bearer admin"})
    shown = shown.get_json()
    error = shown["error"]
    assert shown["status"] == "failed"
    assert error.startswith("database error (IntegrityError")
    assert len(error) <= MAX_ERROR_CHARS
    for leaked in (PRIVATE, "INSERT", "github_events", "[SQL", "parameters"):
        assert leaked not in error
    assert any_store.inbox.get("d-refused").error == error  # type: ignore[union-attr]
    logged = "\n".join(r.getMessage() + str(r.exc_info and r.exc_info[1]) for r in caplog.records)
    assert "INSERT INTO github_events" in logged and PRIVATE in logged
