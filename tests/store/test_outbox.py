from __future__ import annotations

import os
import subprocess

from app.liveness import HOST, process_alive
from app.store import Store
from tests.support import FakeClock


def test_enqueue_is_idempotent_by_key(store: Store) -> None:
    assert store.outbox.enqueue("run1:check:1.2", "create_check", {"task": "1.2"}, run_id="run1")
    assert not store.outbox.enqueue("run1:check:1.2", "create_check", {"task": "other"})
    effect = store.outbox.get("run1:check:1.2")
    assert effect is not None
    assert effect.payload == {"task": "1.2"}
    assert (effect.status, effect.attempts, effect.run_id) == ("pending", 0, "run1")


def test_claim_complete_and_the_backlog(store: Store) -> None:
    store.outbox.enqueue("a", "k", {})
    store.outbox.enqueue("b", "k", {})
    claimed = store.outbox.claim("ex1", lease_seconds=30, limit=5)
    assert sorted(e.key for e in claimed) == ["a", "b"]
    assert store.outbox.claim("ex2", lease_seconds=30) == []
    assert store.outbox.complete("a", "ex1", result={"id": 7}, attempt=1)
    assert store.outbox.backlog() == {"done": 1, "in_flight": 1}
    done = store.outbox.get("a")
    assert done is not None and done.result == {"id": 7}


def test_failed_attempts_retry_at_their_time_then_die(store: Store, clock: FakeClock) -> None:
    store.outbox.enqueue("a", "k", {})
    (e,) = store.outbox.claim("ex", 30)
    assert store.outbox.fail("a", "ex", "HTTP 502", attempt=e.attempts, retry_at=clock() + 60)
    assert store.outbox.claim("ex", 30) == []
    clock.advance(61)
    (e,) = store.outbox.claim("ex", 30)
    assert e.attempts == 2 and e.last_error == "HTTP 502"
    assert store.outbox.fail("a", "ex", "HTTP 422", attempt=e.attempts, retry_at=None)
    dead = store.outbox.get("a")
    assert dead is not None and (dead.status, dead.last_error) == ("dead", "HTTP 422")
    clock.advance(1000)
    assert store.outbox.claim("ex", 30) == []


def test_a_dead_executors_effect_is_reclaimed_and_its_late_result_refused(
    store: Store, clock: FakeClock
) -> None:
    store.outbox.enqueue("a", "k", {}, not_before=clock() + 5)
    assert store.outbox.claim("ex1", 30) == []
    clock.advance(5)
    (first,) = store.outbox.claim("ex1", 30)
    clock.advance(31)
    (second,) = store.outbox.claim("ex2", 30)
    assert (first.key, second.key) == ("a", "a")
    assert not store.outbox.complete("a", "ex1", attempt=first.attempts)
    assert store.outbox.complete("a", "ex2", attempt=second.attempts)
    assert [e.key for e in store.outbox.list()] == ["a"]


def test_a_late_settlement_is_refused_by_its_attempt_even_from_the_same_owner(
    store: Store, clock: FakeClock
) -> None:
    """The claim's attempt is a fencing token: two threads of one executor share
    an owner, so the owner alone cannot tell the stale claim from the live one."""
    store.outbox.enqueue("a", "k", {})
    (stale,) = store.outbox.claim("ex", 30)
    clock.advance(31)  # the lease expires while the first thread is still at it
    (live,) = store.outbox.claim("ex", 30)
    assert (stale.attempts, live.attempts) == (1, 2)
    assert not store.outbox.complete("a", "ex", {"by": "stale"}, attempt=stale.attempts)
    assert not store.outbox.fail("a", "ex", "late", attempt=stale.attempts, retry_at=None)
    assert store.outbox.complete("a", "ex", {"by": "live"}, attempt=live.attempts)
    done = store.outbox.get("a")
    assert done is not None and (done.status, done.result) == ("done", {"by": "live"})


def test_effects_held_by_a_gone_executor_of_this_host_are_due_again_at_once(
    store: Store,
) -> None:
    """An executor stopped mid-effect (or killed): the next start performs the
    effect without waiting out its lease, counted as a second attempt. A live
    holder, and a holder on another host, keep theirs."""
    finished = subprocess.Popen(["true"])  # a process that has ended
    finished.wait()
    owners = {
        "e-gone": f"{HOST}:{finished.pid}:executor:aaaa",
        "e-live": f"{HOST}:{os.getpid()}:executor:bbbb",
        "e-elsewhere": f"another-host.invalid:{finished.pid}:executor:cccc",
    }
    for key, owner in owners.items():
        store.outbox.enqueue(key, "k", {})
        (claimed,) = store.outbox.claim(owner, lease_seconds=120)
        assert claimed.key == key
    assert store.outbox.release_dead(alive=process_alive) == 1
    statuses = {k: store.outbox.get(k).status for k in owners}  # type: ignore[union-attr]
    assert statuses == {"e-gone": "pending", "e-live": "in_flight", "e-elsewhere": "in_flight"}
    (again,) = store.outbox.claim("next-start", lease_seconds=120)
    assert (again.key, again.attempts) == ("e-gone", 2)
