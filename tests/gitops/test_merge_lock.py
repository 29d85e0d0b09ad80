"""One contract for every MergeLock adapter, the store's leases on SQLite and PostgreSQL too."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.gitops.lock import (
    FileMergeLock,
    InProcessMergeLock,
    LeaseMergeLock,
    LockTimeout,
    MergeLock,
    lock_key,
)
from app.store import Store
from tests.store.databases import database_url

ADAPTERS = ["in-process", "file", "lease-sqlite", "lease-postgres"]


@pytest.fixture(params=ADAPTERS, ids=ADAPTERS)
def lock(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[MergeLock]:
    kind: str = request.param
    if kind == "in-process":
        yield InProcessMergeLock()
    elif kind == "file":
        yield FileMergeLock(tmp_path / "locks")
    else:
        with database_url(kind.removeprefix("lease-"), tmp_path) as url:
            store = Store.open(url)
            try:
                yield LeaseMergeLock(store.leases, "contract", ttl=30, poll=0.01)
            finally:
                store.close()


def test_holders_of_one_key_never_overlap(lock: MergeLock) -> None:
    inside = 0
    most = 0
    entered = 0
    guard = threading.Lock()

    def worker() -> None:
        nonlocal inside, most, entered
        for _ in range(5):
            with lock.hold("repo#main", timeout=30):
                with guard:
                    inside += 1
                    entered += 1
                    most = max(most, inside)
                time.sleep(0.002)
                with guard:
                    inside -= 1

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert entered == 20
    assert most == 1


def test_busy_key_times_out_with_a_typed_error(lock: MergeLock) -> None:
    held = threading.Event()
    release = threading.Event()

    def holder() -> None:
        with lock.hold("repo#main", timeout=5):
            held.set()
            release.wait(10)

    t = threading.Thread(target=holder)
    t.start()
    try:
        assert held.wait(5)
        start = time.monotonic()
        with pytest.raises(LockTimeout) as info, lock.hold("repo#main", timeout=0.2):
            pytest.fail("entered a held lock")
        assert 0.15 <= time.monotonic() - start < 30  # it waited; the bound only catches a hang
        assert info.value.key == "repo#main"
        assert "repo#main" in str(info.value)
    finally:
        release.set()
        t.join(10)


def test_other_keys_are_independent(lock: MergeLock) -> None:
    with lock.hold(lock_key("/srv/a.git", "main"), timeout=1):
        with lock.hold(lock_key("/srv/a.git", "develop"), timeout=1):
            pass
        with lock.hold(lock_key("/srv/b.git", "main"), timeout=1):
            pass


def test_released_when_the_block_raises(lock: MergeLock) -> None:
    with pytest.raises(RuntimeError), lock.hold("k", timeout=1):
        raise RuntimeError("boom")
    with lock.hold("k", timeout=0.5):
        pass


def test_keys_with_url_characters_work(lock: MergeLock) -> None:
    key = lock_key("https://example.com/o/r.git/", "release/1.x")
    assert (
        key
        == "https://example.com/o/r#release/1.x"
        == lock_key("https://example.com/o/r", "release/1.x")
    )
    with lock.hold(key, timeout=1), pytest.raises(LockTimeout), lock.hold(key, timeout=0.05):
        pass


_HOLDER = """
import sys, time
from pathlib import Path
from app.gitops.lock import FileMergeLock
with FileMergeLock(Path(sys.argv[1])).hold("repo#main", timeout=5):
    print("held", flush=True)
    time.sleep(float(sys.argv[2]))
"""


def test_file_lock_excludes_other_processes_and_frees_on_death(tmp_path: Path) -> None:
    locks = tmp_path / "locks"
    proc = subprocess.Popen(
        [sys.executable, "-c", _HOLDER, str(locks), "30"], stdout=subprocess.PIPE, text=True
    )
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "held"
        with pytest.raises(LockTimeout), FileMergeLock(locks).hold("repo#main", timeout=0.2):
            pass
        proc.kill()  # a crashed holder must not leave the key stuck
        proc.wait(10)
        with FileMergeLock(locks).hold("repo#main", timeout=5):
            pass
    finally:
        proc.kill()
        proc.wait(10)
