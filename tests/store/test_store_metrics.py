"""What the store counts for `/metrics`: work taken over from a holder whose
lease expired (a dead or stalled process's), and what waits in the outbox."""

from __future__ import annotations

from app import metrics
from app.store import Store
from tests.support import FakeClock


def counted(name: str, **labels: str) -> float:
    return metrics.REGISTRY.get_sample_value(name, labels) or 0.0


def test_a_delivery_taken_from_an_expired_lease_is_counted_once(
    store: Store, clock: FakeClock
) -> None:
    before = counted("odw_claims_reclaimed_total", queue="inbox")
    store.inbox.record("d1", "push", None, None, b"{}")
    store.inbox.record("d2", "push", None, None, b"{}")
    store.inbox.claim("w1", lease_seconds=10)  # d1 only
    assert counted("odw_claims_reclaimed_total", queue="inbox") == before  # a new one is no reclaim
    clock.advance(11)
    taken = store.inbox.claim("w2", lease_seconds=10, limit=5)  # d1 abandoned, d2 new
    assert sorted(d.id for d in taken) == ["d1", "d2"]
    assert counted("odw_claims_reclaimed_total", queue="inbox") == before + 1


def test_an_effect_taken_from_an_expired_lease_is_counted_and_the_outbox_says_what_waits(
    store: Store, clock: FakeClock
) -> None:
    before = counted("odw_claims_reclaimed_total", queue="outbox")
    store.outbox.enqueue("a", "comment", {})
    clock.advance(3)
    store.outbox.enqueue("b", "views", {})
    store.outbox.claim("ex1", lease_seconds=30)  # a
    assert store.outbox.waiting() == (
        {("comment", "in_flight"): 1, ("views", "pending"): 1},
        clock() - 3,
    )
    clock.advance(31)
    (again,) = store.outbox.claim("ex2", lease_seconds=30)  # a again: its lease expired
    assert again.key == "a"
    assert counted("odw_claims_reclaimed_total", queue="outbox") == before + 1
    assert store.outbox.fail("a", "ex2", "gone", retry_at=None)
    by_kind, oldest = store.outbox.waiting()
    assert by_kind == {("comment", "dead"): 1, ("views", "pending"): 1}
    assert oldest == clock() - 31  # a dead effect no longer waits


def test_only_a_lease_taken_from_another_owner_counts_as_adopted(
    store: Store, clock: FakeClock
) -> None:
    before = counted("odw_leases_adopted_total", lease="run")
    assert store.leases.acquire("run:1", "alice", ttl=10)
    assert store.leases.acquire("run:1", "alice", ttl=10)  # a renewal
    clock.advance(11)
    assert store.leases.acquire("run:1", "alice", ttl=10)  # its own, even expired
    assert counted("odw_leases_adopted_total", lease="run") == before
    clock.advance(11)
    assert store.leases.acquire("run:1", "bob", ttl=10)
    assert counted("odw_leases_adopted_total", lease="run") == before + 1
