"""Group commit: deliveries arriving together share one transaction, each
caller learns whether its delivery was new, and a repeated id counts once."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from sqlalchemy import event

from app.store import Store
from app.store.engine import _WRITE_GATES
from app.store.inbox import NewDelivery
from app.web.intake.group_commit import GroupCommit


def delivery(delivery_id: str) -> NewDelivery:
    return NewDelivery(delivery_id, "push", None, 7, b'{"ref":"x"}')


def record_all(intake: GroupCommit, ids: list[str]) -> list[tuple[str, bool]]:
    results: list[tuple[str, bool]] = []
    lock = threading.Lock()

    def one(delivery_id: str) -> None:
        new = intake.record(delivery(delivery_id))
        with lock:
            results.append((delivery_id, new))

    threads = [threading.Thread(target=one, args=(i,)) for i in ids]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    return results


def wait_for(pred: Callable[[], bool], timeout: float = 10) -> None:
    deadline = time.monotonic() + timeout
    while not pred():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.005)


def queued(intake: GroupCommit) -> int | None:
    """How many deliveries wait for the writer, or None before it started."""
    with intake._cond:
        return None if intake._thread is None else len(intake._queue)


def test_concurrent_records_are_each_stored_once_and_told_so(store: Store) -> None:
    store.inbox.record("old", "push", None, 7, b"{}")
    ids = [f"d{i}" for i in range(24)] + ["d1", "d2", "old"]
    results = record_all(GroupCommit(store.inbox), ids)
    assert len(results) == len(ids)
    new = sorted(i for i, was_new in results if was_new)
    assert new == sorted(f"d{i}" for i in range(24))
    assert all(store.inbox.get(f"d{i}") is not None for i in range(24))


def test_records_waiting_on_a_commit_share_the_next_one(tmp_path) -> None:  # type: ignore[no-untyped-def]
    store = Store.open(f"sqlite:///{tmp_path / 'odw.sqlite3'}")
    commits: list[int] = []
    event.listen(store.engine, "commit", lambda _conn: commits.append(1))
    intake = GroupCommit(store.inbox)
    gate = _WRITE_GATES[store.engine]
    ids = [f"g{i}" for i in range(32)]
    with gate:  # another writer holds the database: arrivals queue up
        first = threading.Thread(target=record_all, args=(intake, ids[:1]))
        first.start()
        # The writer has taken the first arrival alone and waits for the
        # database. Read under the queue's lock: `record` names the writer
        # thread and queues its delivery in one critical section, so a writer
        # with an empty queue has taken that delivery (unlocked, the check
        # could fall between the two and let later arrivals join its batch).
        wait_for(lambda: queued(intake) == 0)
        rest = threading.Thread(target=record_all, args=(intake, ids[1:]))
        rest.start()
        # ... while every later one queues behind it: the writer is held, so
        # nothing leaves the queue until the database is free.
        wait_for(lambda: queued(intake) == len(ids) - 1, timeout=60)
    first.join(timeout=30)
    rest.join(timeout=30)
    # The first arrival's commit, then one shared by everything that queued behind it.
    assert len(commits) == 2, len(commits)
    assert sum(1 for i in ids if store.inbox.get(i) is not None) == len(ids)
    store.close()
