from __future__ import annotations

import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from app.gitops.lock import LeaseMergeLock, LockTimeout
from app.store import Store
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
