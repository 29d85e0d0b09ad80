from __future__ import annotations

import threading

from app.store import Store


def test_run_view_never_goes_back_a_version(store: Store) -> None:
    store.projections.put_run("r1", 3, "running", {"tasks": 2})
    store.projections.put_run("r1", 2, "pending", {"tasks": 1})
    view = store.projections.run("r1")
    assert view is not None and (view.version, view.status, view.data) == (
        3,
        "running",
        {"tasks": 2},
    )
    store.projections.put_run("r1", 4, "done", {"tasks": 2})
    assert [r.status for r in store.projections.runs()] == ["done"]
    assert store.projections.runs(status="running") == []


def test_writers_of_a_task_row_keep_each_others_keys(store: Store) -> None:
    """The view syncer and the executor write the same row from different threads;
    neither may undo what the other saved (a lost check run id leaves a check spinning)."""
    rounds = 40

    def writer(name: str) -> None:
        for i in range(rounds):
            store.projections.merge_task("r1", "1.1", {name: i, f"{name}-{i}": True})

    threads = [threading.Thread(target=writer, args=(n,)) for n in ("checkId", "jobUrl", "closed")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    row = store.projections.tasks("r1")["1.1"]
    for name in ("checkId", "jobUrl", "closed"):
        assert row[name] == rounds - 1
        assert all(row[f"{name}-{i}"] for i in range(rounds)), name


def test_a_merge_creates_the_row_and_returns_it_whole(store: Store) -> None:
    assert store.projections.merge_task("r1", "", {"runId": 7}) == {"runId": 7}
    store.projections.merge_task("r1", "1.2", {"pull": 3}, status="closed")
    assert store.projections.merge_task("r1", "1.2", {"closed": True}) == {
        "pull": 3,
        "closed": True,
    }
    assert store.projections.tasks("r1") == {"": {"runId": 7}, "1.2": {"pull": 3, "closed": True}}
