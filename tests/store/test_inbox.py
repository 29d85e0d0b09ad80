from __future__ import annotations

import os
import subprocess
import threading
from pathlib import Path

import pytest
from sqlalchemy import event

from app.liveness import HOST, process_alive
from app.store import LeaseLost, Store
from app.store.inbox import NewDelivery
from app.store.schema import github_events
from tests.support import FakeClock


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


def test_counts_and_what_waits(store: Store, clock: FakeClock) -> None:
    store.inbox.record("d1", "push", None, None, b"{}")
    clock.advance(5)
    store.inbox.record("d2", "star", "created", None, b"{}")
    store.inbox.record("d3", "star", "created", None, b"{}")
    assert store.inbox.waiting() == ({"received": 3, "processing": 0}, clock() - 5)
    store.inbox.claim("w", 10)
    clock.advance(0.2)
    store.inbox.finish("d1", "w", "processed")
    assert store.inbox.counts() == {("push", "processed"): 1, ("star", "received"): 2}
    assert store.inbox.waiting() == ({"received": 2, "processing": 0}, clock() - 0.2)
    store.inbox.claim("w", 10, limit=5)
    for d in ("d2", "d3"):
        store.inbox.finish(d, "w", "ignored")
    assert store.inbox.waiting() == ({"received": 0, "processing": 0}, None)


def test_a_claim_takes_the_longest_due_first_across_new_retried_and_abandoned(
    store: Store, clock: FakeClock
) -> None:
    for i in range(5):
        store.inbox.record(f"d{i}", "push", None, None, b"{}")
        clock.advance(1)
    store.inbox.claim("dead", lease_seconds=10, limit=1)  # d0, whose worker dies
    (d1,) = store.inbox.claim("w1", lease_seconds=100, limit=1)
    store.inbox.retry_later(d1.id, "w1", "TransientError: boom", at=clock() + 20)
    clock.advance(11)  # d0's lease has expired; d1 is not due yet
    assert [d.id for d in store.inbox.claim("w2", lease_seconds=10, limit=2)] == ["d0", "d2"]
    clock.advance(10)  # now d1 is due again, behind d3 and d4, which were due before it
    assert [d.id for d in store.inbox.claim("w3", lease_seconds=10, limit=5)] == [
        "d3",
        "d4",
        "d1",
    ]


def test_a_claim_reads_a_few_rows_whatever_the_backlog(tmp_path: Path) -> None:
    """A burst leaves thousands waiting; taking the first few must not sort them all
    (every claim did, and its cost grew with the backlog)."""
    # SQLite's plan is fixed by its indexes; PostgreSQL plans by its statistics.
    store = Store.open(f"sqlite:///{tmp_path}/odw.sqlite3", clock=FakeClock())
    store.inbox.record_many([NewDelivery(f"d{i}", "push", None, None, b"{}") for i in range(300)])
    plans: list[str] = []

    def explain(conn, cursor, statement, parameters, context, executemany):  # type: ignore[no-untyped-def]
        if statement.lstrip().upper().startswith("SELECT"):
            rows = cursor.connection.execute("EXPLAIN QUERY PLAN " + statement, parameters)
            plans.append(" | ".join(str(r[-1]) for r in rows))

    event.listen(store.engine, "before_cursor_execute", explain)
    try:
        claimed = store.inbox.claim("w1", lease_seconds=10, limit=8)
    finally:
        event.remove(store.engine, "before_cursor_execute", explain)
        store.close()
    assert [d.id for d in claimed] == [f"d{i}" for i in range(8)]
    assert plans, "the claim ran no query"
    assert not [p for p in plans if "TEMP B-TREE" in p], plans


def test_deliveries_held_by_a_gone_worker_of_this_host_are_due_again_at_once(
    store: Store, clock: FakeClock
) -> None:
    """A worker stopped (or killed) before it finished: the next start takes
    its deliveries up without waiting for their lease. A live holder, and a
    holder on another host (which cannot be checked), keep theirs."""
    finished = subprocess.Popen(["true"])  # a process that has ended
    finished.wait()
    owners = {
        "d-gone": f"{HOST}:{finished.pid}:t0:aaaa",
        "d-live": f"{HOST}:{os.getpid()}:t1:bbbb",
        "d-elsewhere": f"another-host.invalid:{finished.pid}:t0:cccc",
    }
    for delivery_id, owner in owners.items():
        store.inbox.record(delivery_id, "push", None, None, b"{}")
        (claimed,) = store.inbox.claim(owner, lease_seconds=60)
        assert claimed.id == delivery_id
    assert store.inbox.release_dead(alive=process_alive) == 1
    statuses = {i: store.inbox.get(i).status for i in owners}  # type: ignore[union-attr]
    assert statuses == {"d-gone": "received", "d-live": "processing", "d-elsewhere": "processing"}
    (again,) = store.inbox.claim("next-start", lease_seconds=60)
    assert again.id == "d-gone"
