"""What the dashboard reads from the store, on SQLite and PostgreSQL: the newest
deliveries without their bodies, every installation with its repositories, and
the runs of a status updated last."""

from __future__ import annotations

from app.store import Store
from tests.support import FakeClock


def test_recent_deliveries_are_the_newest_first_without_bodies(
    store: Store, clock: FakeClock
) -> None:
    for k in range(5):
        store.inbox.record(f"d{k}", "push", None, 7, b'{"secret": "body"}')
        clock.advance(1)
    recent = store.inbox.recent(3)
    assert [d.id for d in recent] == ["d4", "d3", "d2"]
    assert {d.body for d in recent} == {b""}
    assert recent[0].status == "received" and recent[0].installation_id == 7


def test_every_installation_and_repository_is_listed(store: Store) -> None:
    with store.transaction() as tx:
        store.installations.upsert(9, account_login="zed", tx=tx)
        store.installations.upsert(3, account_login="octo", target_type="Organization", tx=tx)
        store.installations.add_repositories(
            3, [{"id": 2, "full_name": "octo/b"}, {"id": 1, "full_name": "octo/a"}], tx=tx
        )
        store.installations.add_repositories(9, [{"id": 5, "full_name": "zed/z"}], tx=tx)
        store.installations.mark_deleted(9, tx=tx)
    rows = store.installations.all()
    assert [(i.id, i.account_login, i.deleted) for i in rows] == [
        (3, "octo", False),
        (9, "zed", True),
    ]
    assert [(r.installation_id, r.full_name) for r in store.installations.all_repositories()] == [
        (3, "octo/a"),
        (3, "octo/b"),
    ]


def test_the_latest_runs_of_a_status_are_the_last_updated(store: Store, clock: FakeClock) -> None:
    for name in ("old", "mid", "new"):
        store.projections.put_run(name, 1, "finished", {})
        clock.advance(1)
    store.projections.put_run("open", 1, "running", {})
    store.projections.put_run("old", 2, "finished", {"again": True})  # updated last
    assert [v.run_id for v in store.projections.latest(2, status="finished")] == ["old", "new"]
    assert [v.run_id for v in store.projections.latest(5, status="running")] == ["open"]
