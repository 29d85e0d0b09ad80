from __future__ import annotations

import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from app.gitops.lock import LeaseMergeLock, LockTimeout
from app.store import LeaseLost, Store
from app.store.leases import Leases
from tests.support import FakeClock


def test_absent_lease_is_taken_and_a_live_owner_keeps_it(store: Store, clock: FakeClock) -> None:
    assert store.leases.acquire("run:1", "alice", ttl=30)
    assert not store.leases.acquire("run:1", "bob", ttl=30)
    clock.advance(29)
    assert not store.leases.acquire("run:1", "bob", ttl=30)
    holder = store.leases.holder("run:1")
    assert holder is not None and holder.owner == "alice"


def test_owner_renews_and_heartbeats(store: Store, clock: FakeClock) -> None:
    assert store.leases.acquire("run:1", "alice", ttl=10)
    clock.advance(8)
    assert store.leases.heartbeat("run:1", "alice", ttl=10)
    clock.advance(8)  # past the first expiry, inside the heartbeat's
    assert not store.leases.acquire("run:1", "bob", ttl=10)
    assert store.leases.acquire("run:1", "alice", ttl=10)
    assert not store.leases.heartbeat("run:1", "bob", ttl=10)


def test_expired_lease_of_a_dead_owner_is_adopted(store: Store, clock: FakeClock) -> None:
    assert store.leases.acquire("run:1", "alice", ttl=10)
    clock.advance(11)
    assert store.leases.acquire("run:1", "bob", ttl=10)
    assert not store.leases.heartbeat("run:1", "alice", ttl=10)
    assert not store.leases.release("run:1", "alice")
    assert store.leases.release("run:1", "bob")
    assert store.leases.holder("run:1") is None


def test_concurrent_acquirers_have_exactly_one_winner(store: Store) -> None:
    winners: list[str] = []
    barrier = threading.Barrier(6)

    def contend(name: str) -> None:
        barrier.wait()
        if store.leases.acquire("merge:main", name, ttl=30):
            winners.append(name)

    threads = [threading.Thread(target=contend, args=(f"w{i}",)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    assert len(winners) == 1


HOLDER = """
import sys, time
from app.store import Store
store = Store.open(sys.argv[1])
assert store.leases.acquire("run:1", "holder", ttl=1)
print("held", flush=True)
time.sleep(60)
"""


def test_a_running_holder_is_not_displaced_on_an_old_heartbeat_alone(tmp_path: Path) -> None:
    """Seed 004: expiry alone does not displace a live process on this host."""
    url = f"sqlite:///{tmp_path / 'odw.sqlite3'}"
    later = FakeClock(time.time() + 3600)
    store = Store.open(url, clock=later)  # real liveness check
    proc = subprocess.Popen([sys.executable, "-c", HOLDER, url], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
        assert not store.leases.acquire("run:1", "adopter", ttl=30)
        proc.kill()
        proc.wait(timeout=10)
        assert store.leases.acquire("run:1", "adopter", ttl=30)
    finally:
        proc.kill()
        proc.wait(timeout=10)
        store.close()


def test_merge_lock_serialises_holders_and_times_out(db_url: str) -> None:
    store = Store.open(db_url)
    first = LeaseMergeLock(store.leases, "first", ttl=5, poll=0.02)
    second = LeaseMergeLock(store.leases, "second", ttl=5, poll=0.02)
    inside: list[str] = []
    with first.hold("owner/repo:main", timeout=1):
        with (
            pytest.raises(LockTimeout, match="held by first"),
            second.hold("owner/repo:main", timeout=0.2),
        ):
            inside.append("second")
        with second.hold("owner/repo:other", timeout=0.2):
            inside.append("other key")
    with second.hold("owner/repo:main", timeout=1):
        inside.append("second after release")
    assert inside == ["other key", "second after release"]
    assert store.leases.holder("merge:owner/repo:main") is None
    store.close()


def test_merge_lock_heartbeats_while_held(db_url: str) -> None:
    store = Store.open(db_url)
    lock = LeaseMergeLock(store.leases, "slow", ttl=0.6, poll=0.02)
    with lock.hold("k", timeout=1):
        time.sleep(1.0)  # longer than the ttl: only heartbeats keep it
        holder = store.leases.holder("merge:k")
        assert holder is not None and holder.expires_at > time.time()
        assert not store.leases.acquire("merge:k", "other", ttl=1)
    store.close()


def test_a_hold_that_lost_its_lease_writes_nothing(store: Store, clock: FakeClock) -> None:
    """The fencing token: a holder that stalled past its expiry is refused in
    its own transaction, and the write it guarded is not committed."""
    first = store.leases.acquire("app-run:r", "alice:1", ttl=10)
    assert first is not None
    store.leases.fence(first)  # still held
    clock.advance(11)
    second = store.leases.acquire("app-run:r", "bob:1", ttl=10)  # adopted
    assert second is not None and second != first
    assert not store.leases.renew(first, ttl=10)
    with pytest.raises(LeaseLost), store.transaction() as tx:
        store.projections.merge_task("r", "1.1", {"checkId": 1}, tx=tx)
        store.leases.fence(first, tx=tx)
    assert store.projections.tasks("r").get("1.1", {}).get("checkId") is None
    store.leases.fence(second)


def test_a_hold_is_not_revived_when_its_owner_takes_the_lease_again(
    store: Store, clock: FakeClock
) -> None:
    """Losing the lease and taking it again makes a new hold: work still
    running under the old one stays refused (no A-B-A)."""
    old = store.leases.acquire("app-run:r", "alice", ttl=10)
    clock.advance(11)
    assert store.leases.acquire("app-run:r", "bob", ttl=10)
    assert store.leases.release("app-run:r", "bob")
    clock.advance(1)
    new = store.leases.acquire("app-run:r", "alice", ttl=10)
    assert old is not None and new is not None and new.owner == old.owner
    with pytest.raises(LeaseLost):
        store.leases.fence(old)
    store.leases.fence(new)
    # A renewal keeps the hold it renews.
    clock.advance(5)
    assert store.leases.acquire("app-run:r", "alice", ttl=10) == new
    assert store.leases.renew(new, ttl=10)


RUN_OWNER = """
import sys, time
from app.renewal import renewing
from app.store import Store
store = Store.open(sys.argv[1])
hold = store.leases.acquire("app-run:r", "owner-process", ttl=1)
assert hold is not None
with renewing(lambda: store.leases.renew(hold, 1), 1 / 3, "the run"):
    print("held", flush=True)
    time.sleep(60)
"""


def test_a_run_owner_in_another_process_keeps_its_run_and_a_dead_one_loses_it(
    db_url: str,
) -> None:
    """Renewed, the lease outlives its ttl while its process lives; killed, the
    run is adopted once the lease runs out, even by a host that cannot see
    the process (the dead owner's late write would then be refused)."""
    store = Store.open(db_url)
    # Another host's view: it cannot see the owner's process, so only expiry counts.
    elsewhere = Leases(store.engine, alive=lambda host, pid: False)
    proc = subprocess.Popen(
        [sys.executable, "-c", RUN_OWNER, db_url], stdout=subprocess.PIPE, text=True
    )
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
        time.sleep(2.5)  # over twice the ttl: only renewals keep it
        assert elsewhere.acquire("app-run:r", "adopter", ttl=30) is None
        proc.kill()
        proc.wait(timeout=10)
        dead = store.leases.holder("app-run:r")
        assert dead is not None and dead.owner == "owner-process"
        refused_after_expiry = []
        while True:
            asked = time.time()
            taken = elsewhere.acquire("app-run:r", "adopter", ttl=30)
            if taken is not None:
                break
            if asked > dead.expires_at:
                refused_after_expiry.append(asked - dead.expires_at)
            assert asked < dead.expires_at + 10, "never adopted"
            time.sleep(0.05)
        assert refused_after_expiry == []  # adopted as soon as the lease ran out
        assert asked >= dead.expires_at  # ... and not before
        holder = store.leases.holder("app-run:r")
        assert holder is not None and holder.owner == "adopter" == taken.owner
    finally:
        proc.kill()
        proc.wait(timeout=10)
        store.close()
