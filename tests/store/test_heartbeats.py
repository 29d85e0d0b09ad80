"""Service heartbeats: live while renewed, gone when ended or silent too long."""

from __future__ import annotations

from app.store import Store
from app.store.heartbeats import FORGET_SECONDS, LIVE_SECONDS
from tests.support import FakeClock


def test_a_renewed_heartbeat_is_live_and_a_silent_one_is_not(
    store: Store, clock: FakeClock
) -> None:
    assert store.heartbeats.live() == []
    store.heartbeats.beat("a", acts_on_runs=True)
    clock.advance(LIVE_SECONDS - 1)
    store.heartbeats.beat("b", acts_on_runs=False)
    assert [(h.process, h.acts_on_runs) for h in store.heartbeats.live()] == [
        ("b", False),
        ("a", True),
    ]
    clock.advance(2)  # "a" has been silent past LIVE_SECONDS
    assert [h.process for h in store.heartbeats.live()] == ["b"]
    store.heartbeats.beat("a", acts_on_runs=True)
    (a,) = [h for h in store.heartbeats.live() if h.process == "a"]
    assert a.started_at == clock.t - LIVE_SECONDS - 1 and a.seen_at == clock.t


def test_an_ended_heartbeat_goes_at_once_and_old_ones_are_forgotten(
    store: Store, clock: FakeClock
) -> None:
    store.heartbeats.beat("a", acts_on_runs=True)
    store.heartbeats.beat("b", acts_on_runs=True)
    store.heartbeats.end("a")
    assert [h.process for h in store.heartbeats.live()] == ["b"]
    clock.advance(FORGET_SECONDS + 1)
    store.heartbeats.beat("c", acts_on_runs=True)
    assert [h.process for h in store.heartbeats.live(within=FORGET_SECONDS * 2)] == ["c"]
