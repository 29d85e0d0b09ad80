"""Signed but hostile deliveries: each is a 400 naming the reason, nothing is
stored and no traceback is shown, on SQLite and on PostgreSQL alike (the
edge checks what PostgreSQL would refuse, so both behave the same)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest
from flask.testing import FlaskClient

from app.service.handlers import build_router
from app.service.worker import DeliveryWorker, WorkerConfig
from app.service_settings import Settings
from app.store import Store
from tests.webhooks import oracle
from tests.webhooks.conftest import SECRET
from webhooks.delivery import MAX_DEPTH, MAX_VALUES
from webhooks.signature import sign


@pytest.fixture
def any_client(any_store: Store, tmp_path: Path) -> FlaskClient:
    from app.web.app import create_app

    settings = Settings(webhook_secret=SECRET, data_dir=tmp_path)  # type: ignore[arg-type]
    return create_app(settings, any_store).test_client()


def nested(depth: int) -> str:
    return "[" * depth + "]" * depth


def body_with(fragment: str) -> bytes:
    """A push-shaped body with one raw JSON fragment spliced in."""
    return ('{"ref":"refs/heads/main","installation":{"id":1},"extra":' + fragment + "}").encode()


HOSTILE: list[tuple[str, dict[str, str], bytes, str]] = [
    ("deep-981", {}, body_with(nested(981)), f"nests deeper than {MAX_DEPTH}"),
    ("deep-past-values", {}, body_with(nested(MAX_VALUES)), "JSON values"),
    ("deep-objects", {}, body_with('{"a":' * 2000 + "1" + "}" * 2000), "nests deeper"),
    (
        "deep-in-form",
        {"Content-Type": "application/x-www-form-urlencoded"},
        urlencode({"payload": body_with(nested(981)).decode()}).encode(),
        "nests deeper",
    ),
    ("tiny-lists", {}, body_with("[" + "[]," * MAX_VALUES + "[]]"), "JSON values"),
    (
        "installation-id-2**63",
        {},
        json.dumps({"installation": {"id": 2**63}}).encode(),
        "outside the range",
    ),
    (
        "installation-id-negative",
        {},
        json.dumps({"installation": {"id": -(2**70)}}).encode(),
        "outside the range",
    ),
    ("installation-id-string", {}, b'{"installation":{"id":"123"}}', "not a string"),
    ("installation-id-true", {}, b'{"installation":{"id":true}}', "not a boolean"),
    ("installation-id-float", {}, b'{"installation":{"id":1.0}}', "not a number"),
    ("installation-not-object", {}, b'{"installation":[1]}', "must be an object"),
    ("action-101-chars", {}, json.dumps({"action": "a" * 101}).encode(), "longer than 100"),
    ("action-nul", {}, b'{"action":"opened\\u0000"}', "control characters"),
    ("action-number", {}, b'{"action":1}', "action must be a string"),
    ("huge-integer", {}, b'{"a":' + b"9" * 5000 + b"}", "not JSON"),
    ("unterminated", {}, b'{"a":"' + b"[" * 5000, "not JSON"),
]


@pytest.mark.parametrize(
    ("headers", "body", "reason"),
    [(h, b, r) for _, h, b, r in HOSTILE],
    ids=[name for name, *_ in HOSTILE],
)
def test_a_signed_hostile_body_is_400_with_the_reason_and_nothing_is_stored(
    any_client: FlaskClient, any_store: Store, headers: dict[str, str], body: bytes, reason: str
) -> None:
    _, sent = oracle.signed(SECRET, "push", {}, "hostile")
    sent.update(headers)
    sent["X-Hub-Signature-256"] = sign(SECRET, body)
    resp = any_client.post("/webhooks", data=body, headers=sent)
    assert resp.status_code == 400, resp.get_data()[:300]
    assert reason in resp.get_json()["error"]
    assert "Traceback" not in resp.get_data(as_text=True)
    assert any_store.inbox.counts() == {}


@pytest.mark.parametrize(
    ("header", "value", "reason"),
    [
        ("X-GitHub-Delivery", "d" * 101, "longer than 100"),
        ("X-GitHub-Event", "e" * 101, "longer than 100"),
        ("X-GitHub-Delivery", "a b", "visible ASCII"),
        ("X-GitHub-Event", "push\x7f", "visible ASCII"),
    ],
    ids=["long-id", "long-event", "space-in-id", "control-in-event"],
)
def test_headers_that_do_not_fit_the_inbox_are_400(
    any_client: FlaskClient, any_store: Store, header: str, value: str, reason: str
) -> None:
    body, sent = oracle.signed(SECRET, "push", {"ref": "x"})
    sent[header] = value
    resp = any_client.post("/webhooks", data=body, headers=sent)
    assert resp.status_code == 400
    assert reason in resp.get_json()["error"]
    assert any_store.inbox.counts() == {}


def deep_but_allowed(levels: int) -> dict[str, Any]:
    payload: dict[str, Any] = {"action": "created", "installation": {"id": 2**63 - 1}}
    payload["extra"] = json.loads(nested(levels - 1))  # the top-level object is one level
    return payload


def test_the_limits_themselves_are_accepted_stored_and_processed(
    any_client: FlaskClient, any_store: Store
) -> None:
    """The bounds refuse nothing a real delivery could need: the deepest and
    the largest allowed ids go through, and the worker handles them."""
    for delivery_id, content_type in (("json", "application/json"), ("form", None)):
        body, sent = oracle.signed(SECRET, "star", deep_but_allowed(MAX_DEPTH), delivery_id)
        if content_type is None:
            body = urlencode({"payload": body.decode()}).encode()
            sent["Content-Type"] = "application/x-www-form-urlencoded"
            sent["X-Hub-Signature-256"] = sign(SECRET, body)
        resp = any_client.post("/webhooks", data=body, headers=sent)
        assert resp.status_code == 202, resp.get_json()
        stored = any_store.inbox.get(delivery_id)
        assert stored is not None and stored.installation_id == 2**63 - 1
        assert json.loads(stored.body) == deep_but_allowed(MAX_DEPTH)
    worker = DeliveryWorker(any_store, build_router(), WorkerConfig())
    assert [worker.process_one(), worker.process_one()] == ["ignored", "ignored"]


def spoiled(event: str, action: str | None, path: str, value: Any) -> dict[str, Any]:
    """GitHub's published example of `event` (with `action`), one field set to `value`."""
    (example, *_) = [
        e for e in oracle.require(event) if action is None or e.payload.get("action") == action
    ]
    payload = example.as_app_delivery()
    *parents, last = path.split(".")
    target: Any = payload
    for key in parents:
        target = target[int(key)] if isinstance(target, list) else target[key]
    target[int(last) if isinstance(target, list) else last] = value
    return payload


# Signed fields the edge leaves to the worker's typed events: values GitHub
# never sends, which no database column takes (PostgreSQL refuses NUL in text;
# ids are BIGINT on both databases).
SPOILED = [
    ("repository-id-2**64", "installation", "created", "repositories.0.id", 2**64),
    (
        "added-id-negative",
        "installation_repositories",
        "added",
        "repositories_added.0.id",
        -(2**70),
    ),
    ("push-ref-nul", "push", None, "ref", "refs/heads/ma\x00in"),
    ("account-login-nul", "installation", "created", "installation.account.login", "octo\x00cat"),
    ("sender-login-nul", "pull_request", "opened", "sender.login", "\x00"),
]


@pytest.mark.parametrize(
    ("event", "action", "path", "value"),
    [case[1:] for case in SPOILED],
    ids=[case[0] for case in SPOILED],
)
def test_a_signed_value_no_column_takes_is_rejected_with_the_reason_once(
    any_client: FlaskClient,
    any_store: Store,
    caplog: pytest.LogCaptureFixture,
    event: str,
    action: str | None,
    path: str,
    value: Any,
) -> None:
    """The edge stores it (its checks are cheap and bounded); the worker's
    typed event refuses it: `rejected` with the field and the reason, no
    traceback, nothing written for it, and never tried again."""
    body, sent = oracle.signed(SECRET, event, spoiled(event, action, path, value), "spoiled")
    assert any_client.post("/webhooks", data=body, headers=sent).status_code == 202
    worker = DeliveryWorker(any_store, build_router(), WorkerConfig(retry_base_seconds=0))

    assert worker.process_one() == "rejected"
    assert worker.process_one() is None  # not due again, ever

    stored = any_store.inbox.get("spoiled")
    assert stored is not None and stored.status == "rejected"
    reason = "text contains a NUL character" if isinstance(value, str) else "64-bit range"
    assert stored.error is not None and stored.error.startswith(f"{event} payload: {path}: ")
    assert reason in stored.error
    assert stored.attempts == 1
    assert any_store.activity.list() == []
    assert not [r for r in caplog.records if r.exc_info]
