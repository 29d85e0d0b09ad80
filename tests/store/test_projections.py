from __future__ import annotations

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
