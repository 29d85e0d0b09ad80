from __future__ import annotations

import threading

import pytest

from app.store import LeaseLost, Store
from app.store.schema import github_events
from tests.store.conftest import FakeClock


def test_a_delivery_id_is_stored_once(store: Store) -> None:
    assert store.inbox.record("d1", "push", None, 42, b'{"ref":"a"}')
    assert not store.inbox.record("d1", "push", None, 42, b'{"ref":"changed"}')
    d = store.inbox.get("d1")
    assert d is not None
    assert (d.status, d.attempts, d.body, d.installation_id) == ("received", 0, b'{"ref":"a"}', 42)
    assert store.inbox.get("nope") is None


def test_claims_are_exclusive_until_the_lease_expires(store: Store, clock: FakeClock) -> None:
    store.inbox.record("d1", "push", None, None, b"{}")
    (d,) = store.inbox.claim("w1", lease_seconds=10)
    assert (d.status, d.attempts, d.lease_owner) == ("processing", 1, "w1")
    assert store.inbox.claim("w2", lease_seconds=10) == []
    clock.advance(11)
    (again,) = store.inbox.claim("w2", lease_seconds=10)
    assert (again.attempts, again.lease_owner) == (2, "w2")


def test_a_displaced_worker_cannot_finish_and_its_writes_roll_back(
    store: Store, clock: FakeClock
) -> None:
    store.inbox.record("d1", "push", None, None, b"{}")
    store.inbox.claim("w1", lease_seconds=10)
    clock.advance(11)
    store.inbox.claim("w2", lease_seconds=10)
    with pytest.raises(LeaseLost), store.inbox.finishing("d1", "w1", "processed") as tx:
        tx.execute(
            github_events.insert().values(
                delivery_id="d1", event="push", data="{}", recorded_at=clock()
            )
        )
    with store.inbox.finishing("d1", "w2", "processed") as tx:
        pass
    d = store.inbox.get("d1")
    assert d is not None and (d.status, d.processed_by) == ("processed", "w2")
    assert store.activity.list() == []


def test_retry_later_and_release(store: Store, clock: FakeClock) -> None:
    store.inbox.record("d1", "push", None, None, b"{}")
    store.inbox.claim("w1", 10)
    store.inbox.retry_later("d1", "w1", "TransientError: boom", at=clock() + 30)
    assert store.inbox.claim("w1", 10) == []
    clock.advance(30)
    (d,) = store.inbox.claim("w1", 10)
    assert (d.attempts, d.error) == (2, "TransientError: boom")
    assert store.inbox.release("d1", "w1")
    back = store.inbox.get("d1")
    assert back is not None and (back.status, back.attempts) == ("received", 1)


def test_concurrent_claimers_never_share_a_delivery(store: Store) -> None:
    for i in range(60):
        store.inbox.record(f"d{i}", "push", None, None, b"{}")
    taken: dict[str, list[str]] = {}
    lock = threading.Lock()

    def claimer(name: str) -> None:
        while batch := store.inbox.claim(name, lease_seconds=60, limit=3):
            with lock:
                for d in batch:
                    taken.setdefault(d.id, []).append(name)

    threads = [threading.Thread(target=claimer, args=(f"w{i}",)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert len(taken) == 60
    assert all(len(owners) == 1 for owners in taken.values())


def test_counts_and_latency(store: Store, clock: FakeClock) -> None:
    store.inbox.record("d1", "push", None, None, b"{}")
    store.inbox.record("d2", "star", "created", None, b"{}")
    store.inbox.claim("w", 10)
    clock.advance(0.2)
    store.inbox.finish("d1", "w", "processed")
    assert store.inbox.counts() == {("push", "processed"): 1, ("star", "received"): 1}
    cumulative, count, total = store.inbox.latency_histogram((0.1, 0.5))
    assert (cumulative, count) == ([0, 1], 1)
    assert total == pytest.approx(0.2)
