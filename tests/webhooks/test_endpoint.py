from __future__ import annotations

import io
import json
from pathlib import Path
from urllib.parse import urlencode

import pytest
from flask.testing import FlaskClient
from prometheus_client.parser import text_string_to_metric_families

from app.service.handlers import build_router
from app.service.worker import DeliveryWorker, WorkerConfig
from app.service_settings import Settings, SettingsError
from app.store import Store
from app.web.app import create_app
from app.web.intake.client import IntakeClient
from tests.store.reads import recorded_per_delivery
from tests.webhooks import oracle
from tests.webhooks.conftest import PREVIOUS, SECRET
from webhooks.signature import sign


def drain(store: Store) -> list[str]:
    worker = DeliveryWorker(store, build_router(), WorkerConfig(retry_base_seconds=0))
    outcomes = []
    while (outcome := worker.process_one()) is not None:
        outcomes.append(outcome)
    return outcomes


def post(client: FlaskClient, body: bytes, headers: dict[str, str]):  # type: ignore[no-untyped-def]
    return client.post("/webhooks", data=body, headers=headers)


def test_every_published_example_is_accepted_and_ends_processed_or_ignored(
    client: FlaskClient, store: Store
) -> None:
    found = oracle.require(*oracle.ODW_EVENTS)
    sent: dict[str, oracle.Example] = {}
    for example in found:
        for payload in (example.payload, example.as_app_delivery()):
            body, headers = oracle.signed(SECRET, example.event, payload)
            resp = post(client, body, headers)
            assert resp.status_code == 202, (example.id, resp.get_json())
            sent[headers["X-GitHub-Delivery"]] = example
    drain(store)
    for delivery_id, example in sent.items():
        d = store.inbox.get(delivery_id)
        assert d is not None
        assert d.status in ("processed", "ignored"), (example.id, d.status, d.error)
        if json.loads(d.body).get("installation"):
            assert d.status == "processed", (example.id, d.error)
        else:
            assert "no installation" in (d.error or "")
    recorded = recorded_per_delivery(store)
    assert all(n == 1 for n in recorded.values())


def test_a_wrong_or_missing_signature_is_401_and_nothing_is_stored(
    client: FlaskClient, store: Store
) -> None:
    body, headers = oracle.signed("not the secret", "push", {"ref": "refs/heads/main"}, "d-bad")
    assert post(client, body, headers).status_code == 401
    del headers["X-Hub-Signature-256"]
    assert post(client, body, headers).status_code == 401
    _, good = oracle.signed(SECRET, "push", {"ref": "refs/heads/main"}, "d-bad")
    tampered = body.replace(b"main", b"evil")
    assert post(client, tampered, good).status_code == 401
    assert store.inbox.get("d-bad") is None
    assert store.inbox.counts() == {}


def test_the_previous_secret_still_verifies_during_rotation(
    client: FlaskClient, store: Store
) -> None:
    body, headers = oracle.signed(PREVIOUS, "star", {"action": "created"}, "d-rot")
    assert post(client, body, headers).status_code == 202
    assert store.inbox.get("d-rot") is not None


@pytest.mark.parametrize(
    ("body", "drop", "fragment"),
    [
        (b"not json at all", None, "not JSON"),
        (b"\xff\xfe", None, "not JSON"),
        (b"[1, 2]", None, "not a JSON object"),
        (b"{}", "X-GitHub-Event", "X-GitHub-Event"),
        (b"{}", "X-GitHub-Delivery", "X-GitHub-Delivery"),
    ],
    ids=["text", "binary", "array", "no-event", "no-delivery"],
)
def test_unusable_deliveries_are_400_and_not_stored(
    client: FlaskClient, store: Store, body: bytes, drop: str | None, fragment: str
) -> None:
    _, headers = oracle.signed(SECRET, "push", {})
    headers["X-Hub-Signature-256"] = sign(SECRET, body)
    if drop:
        del headers[drop]
    resp = post(client, body, headers)
    assert resp.status_code == 400
    assert fragment in resp.get_json()["error"]
    assert store.inbox.counts() == {}


def test_ping_is_answered_200_and_not_queued(client: FlaskClient, store: Store) -> None:
    body, headers = oracle.signed(SECRET, "ping", {"zen": "Keep it logically awesome."})
    resp = post(client, body, headers)
    assert resp.status_code == 200
    assert store.inbox.counts() == {}


def test_a_form_encoded_delivery_is_accepted(client: FlaskClient, store: Store) -> None:
    payload = {"action": "created", "installation": {"id": 9}}
    body = urlencode({"payload": json.dumps(payload)}).encode()
    _, headers = oracle.signed(SECRET, "star", payload, "d-form")
    headers["Content-Type"] = "application/x-www-form-urlencoded"
    headers["X-Hub-Signature-256"] = sign(SECRET, body)
    assert post(client, body, headers).status_code == 202
    stored = store.inbox.get("d-form")
    assert stored is not None and json.loads(stored.body) == payload


class CountingStream(io.RawIOBase):
    """A large body produced on demand, counting what the server reads."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.pos = 0
        self.read_bytes = 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self.pos

    def seek(self, offset: int, whence: int = 0) -> int:
        self.pos = {0: offset, 1: self.pos + offset, 2: self.size + offset}[whence]
        return self.pos

    def readinto(self, buffer) -> int:  # type: ignore[no-untyped-def,override]
        n = max(0, min(len(buffer), self.size - self.pos))
        buffer[:n] = b" " * n
        self.pos += n
        self.read_bytes += n
        return n


def test_an_oversized_body_is_413_without_being_read(client: FlaskClient, store: Store) -> None:
    size = 26_000_000
    stream = CountingStream(size)
    _, headers = oracle.signed(SECRET, "push", {})
    resp = client.post(
        "/webhooks",
        input_stream=stream,
        headers=headers,
    )
    assert resp.status_code == 413
    assert stream.read_bytes == 0
    assert store.inbox.counts() == {}


def test_the_same_delivery_twice_is_stored_and_processed_once(
    client: FlaskClient, store: Store
) -> None:
    (example, *_) = oracle.require("push")
    body, headers = oracle.signed(SECRET, "push", example.as_app_delivery(), "d-dup")
    first, second = post(client, body, headers), post(client, body, headers)
    assert (first.status_code, second.status_code) == (202, 202)
    assert (first.get_json()["status"], second.get_json()["status"]) == ("received", "duplicate")
    drain(store)
    assert post(client, body, headers).get_json()["status"] == "duplicate"
    assert drain(store) == []
    assert recorded_per_delivery(store) == {"d-dup": 1}


def test_delivery_status_api(client: FlaskClient, store: Store) -> None:
    body, headers = oracle.signed(SECRET, "star", {"action": "created"}, "d-api")
    post(client, body, headers)
    assert client.get("/api/deliveries/d-api").get_json() == {
        "id": "d-api",
        "event": "star",
        "action": "created",
        "status": "received",
        "attempts": 0,
        "error": None,
    }
    drain(store)
    got = client.get("/api/deliveries/d-api").get_json()
    assert (got["status"], got["attempts"]) == ("ignored", 1)
    assert "no handler for 'star'" in got["error"]
    assert client.get("/api/deliveries/unknown").status_code == 404


def scrape(client: FlaskClient) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """`/metrics` parsed by prometheus_client's own parser: value by (sample, labels)."""
    resp = client.get("/metrics")
    assert resp.status_code == 200
    assert resp.content_type.startswith("text/plain; version=0.0.4")
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(resp.get_data(as_text=True))
        for sample in family.samples
    }


def test_metrics_report_outcomes_queue_and_outbox(client: FlaskClient, store: Store) -> None:
    """Counters count in this process (no multiprocess directory here), so the
    test reads what they gained; the queues are read from the database."""
    before = scrape(client)

    def gained(name: str, **labels: str) -> float:
        key = (name, tuple(sorted(labels.items())))
        return after.get(key, 0.0) - before.get(key, 0.0)

    for i, event in enumerate(["star", "star", "fork"]):
        body, headers = oracle.signed(SECRET, event, {"action": "created"}, f"m{i}")
        post(client, body, headers)
    body, headers = oracle.signed(SECRET, "star", {"action": "created"}, "m0")
    post(client, body, headers)
    body, headers = oracle.signed("wrong", "star", {"action": "created"}, "m9")
    post(client, body, headers)
    store.outbox.enqueue("k1", "comment", {})
    after = scrape(client)
    assert after[("odw_inbox_depth", (("status", "received"),))] == 3
    assert after[("odw_outbox_depth", (("kind", "comment"), ("status", "pending")))] == 1
    assert gained("odw_webhook_deliveries_total", event="star", outcome="received") == 2
    assert gained("odw_webhook_deliveries_total", event="fork", outcome="received") == 1
    assert gained("odw_webhook_deliveries_total", event="star", outcome="duplicate") == 1
    assert (
        gained("odw_webhook_deliveries_total", event="unverified", outcome="unauthenticated") == 1
    )
    drain(store)
    after = scrape(client)
    assert gained("odw_deliveries_handled_total", event="star", outcome="ignored") == 2
    assert gained("odw_deliveries_handled_total", event="fork", outcome="ignored") == 1
    assert after[("odw_inbox_depth", (("status", "received"),))] == 0
    assert after[("odw_inbox_oldest_age_seconds", ())] == 0
    assert gained("odw_delivery_processing_seconds_count") == 3


def test_healthz_reflects_the_database(client: FlaskClient, tmp_path) -> None:  # type: ignore[no-untyped-def]
    assert client.get("/healthz").get_json() == {
        "status": "ok",
        "database": "ok",
        "intake": "ok",
        "worker": "down",  # none runs in this test; only `odw serve` with workers needs one
        "github": "not configured",
    }
    down = Store("postgresql+psycopg://nobody@127.0.0.1:1/none?connect_timeout=2")
    settings = Settings(webhook_secret=SECRET, data_dir=tmp_path)  # type: ignore[arg-type]
    resp = create_app(settings, down).test_client().get("/healthz")
    assert resp.status_code == 503


def test_without_its_intake_a_delivery_is_503_and_healthz_says_why(
    store: Store, tmp_path: Path
) -> None:
    """Served with an intake process (`odw serve`) that cannot be reached."""
    settings = Settings(webhook_secret=SECRET, data_dir=tmp_path)  # type: ignore[arg-type]
    gone = IntakeClient(str(tmp_path / "no-intake.sock"))
    client = create_app(settings, store, intake=gone).test_client()
    (example, *_) = oracle.require("push")
    body, headers = oracle.signed(SECRET, "push", example.as_app_delivery(), "d-unstored")
    resp = post(client, body, headers)
    assert resp.status_code == 503
    assert resp.get_json() == {"error": "the delivery could not be stored; nothing was accepted"}
    assert store.inbox.get("d-unstored") is None
    health = client.get("/healthz")
    assert health.status_code == 503
    assert health.get_json() == {
        "status": "unavailable",
        "database": "ok",
        "intake": "unreachable",
        "worker": "down",
        "github": "not configured",
        "down": ["intake"],
    }


def test_the_app_refuses_to_start_without_a_secret(store: Store, tmp_path) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(SettingsError, match="ODW_WEBHOOK_SECRET is not set"):
        create_app(Settings(data_dir=tmp_path), store)
