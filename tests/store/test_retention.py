"""Retention: finished deliveries and their recorded events older than the
configured age are pruned; nothing a live run needs is."""

from __future__ import annotations

import threading

from app.service.retention import sweeper
from app.service_settings import load_settings
from app.store import Store
from tests.support import FakeClock

DAY = 86_400.0
FOURTEEN_DAYS = 14 * DAY


def _finished(store: Store, delivery_id: str, status: str = "processed") -> None:
    store.inbox.record(delivery_id, "issue_comment", "created", 7, b'{"comment":"secret text"}')
    (d,) = store.inbox.claim("w", lease_seconds=60)
    assert d.id == delivery_id
    with store.inbox.finishing(delivery_id, "w", status) as tx:  # type: ignore[arg-type]
        store.activity.record(
            delivery_id,
            "issue_comment",
            "created",
            installation_id=7,
            repository="o/r",
            subject="o/r#1",
            data={"body": "secret text"},
            tx=tx,
        )


def test_retention_prunes_old_finished_deliveries_and_their_bodies(
    store: Store, clock: FakeClock
) -> None:
    _finished(store, "old")
    clock.advance(FOURTEEN_DAYS + 1)
    _finished(store, "recent")
    pruned = store.retention.prune(FOURTEEN_DAYS)
    assert (pruned.deliveries, pruned.recorded_events) == (1, 1)
    assert store.inbox.get("old") is None
    assert store.inbox.get("recent") is not None
    assert [e.delivery_id for e in store.activity.list()] == ["recent"]
    assert store.retention.prune(FOURTEEN_DAYS).deliveries == 0


def test_retention_keeps_what_a_live_run_needs(store: Store, clock: FakeClock) -> None:
    store.inbox.record("waiting", "workflow_run", "completed", 7, b"{}")
    store.inbox.record("held", "workflow_run", "completed", 7, b"{}")
    clock.advance(1)
    store.inbox.claim("w", lease_seconds=10 * FOURTEEN_DAYS)  # "held" stays processing
    store.events.append("run-1", [{"type": "run-started"}], 0)
    store.outbox.enqueue("k1", "dispatch", {"stage": "plan"}, run_id="run-1")
    clock.advance(10 * FOURTEEN_DAYS)
    assert store.retention.prune(FOURTEEN_DAYS).deliveries == 0
    assert store.inbox.get("waiting") is not None and store.inbox.get("held") is not None
    assert [e["type"] for e in store.events.load("run-1")] == ["run-started"]
    assert store.outbox.backlog().get("pending") == 1


def test_the_retention_sweep_runs_at_start_with_the_configured_age(
    store: Store, clock: FakeClock
) -> None:
    _finished(store, "two-days-old")
    clock.advance(2 * DAY + 1)
    days = load_settings(retention_days="2").retention_days
    stop = threading.Event()
    thread = sweeper(store, days * DAY, stop, every=3600)
    thread.start()
    stop.set()
    thread.join(10)
    assert not thread.is_alive()
    assert store.inbox.get("two-days-old") is None


def test_retention_defaults_to_fourteen_days(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.delenv("ODW_RETENTION_DAYS", raising=False)
    assert load_settings().retention_days == 14
    monkeypatch.setenv("ODW_RETENTION_DAYS", "30")
    assert load_settings().retention_days == 30


def _done(store: Store, key: str, run_id: str | None) -> None:
    store.outbox.enqueue(key, "app-views", {"run_id": run_id}, run_id=run_id)
    (entry,) = store.outbox.claim("x", 60, 1)
    assert entry.key == key
    store.outbox.complete(key, "x", {"ok": True}, attempt=entry.attempts)


def test_retention_prunes_old_done_outbox_entries_of_ended_runs_only(
    store: Store, clock: FakeClock
) -> None:
    store.events.append("ended", [{"type": "run-started"}], 0)
    store.events.append("live", [{"type": "run-started"}], 0)
    _done(store, "ended/old", "ended")
    _done(store, "live/old", "live")
    _done(store, "start/old", None)
    # Old but not done (waiting out a retry): never pruned.
    later = clock() + 2 * FOURTEEN_DAYS
    store.outbox.enqueue("ended/pending", "dispatch", {}, run_id="ended", not_before=later)
    store.events.append("ended", [{"type": "run-ended"}], 1)
    clock.advance(FOURTEEN_DAYS + 1)
    _done(store, "start/recent", None)
    pruned = store.retention.prune(FOURTEEN_DAYS)
    assert pruned.outbox == 2
    kept = {e.key for e in store.outbox.list()}
    # A live run's entries are its idempotency keys; a pending one is still to do.
    assert kept == {"live/old", "ended/pending", "start/recent"}
    assert store.retention.prune(FOURTEEN_DAYS).outbox == 0
