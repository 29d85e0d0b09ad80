"""Views read what was judged from the run's log, so any process can draw them
(`app/apphost/judged.py`): the verdict files are unpacked on one process only."""

from __future__ import annotations

from pathlib import Path

from app.apphost.judged import judged
from app.core import events as ev
from app.store import Store
from tests.web.dashboard_runs import save_run

SPEC = {
    "roadmap": "# R\n\n- [ ] 1.1. First\n- [ ] 1.2. Second\n",
    "config": {"maxParallel": 2, "gateRetryBudget": 0, "routeBudget": 0},
    "outcomes": {"1.2": {"gates": ["gate:build:make test failed"]}},
}


def judged_events(store: Store, run_id: str) -> list[ev.AttemptJudged]:
    found = [ev.event_from_json(row) for row in store.events.load(run_id)]
    return [e for e in found if isinstance(e, ev.AttemptJudged)]


def test_each_task_shows_its_newest_verdict_and_every_stage_it_spent_time_in(
    tmp_path: Path,
) -> None:
    store = Store.open(f"sqlite:///{tmp_path / 'odw.sqlite3'}")
    try:
        save_run(store, SPEC, run_id="r")
        seen = judged_events(store, "r")
        found = judged(store, "r")
    finally:
        store.close()
    for task in ("1.1", "1.2"):
        mine = [e for e in seen if e.task == task]
        assert found.latest[task] == mine[-1].verdict
        stages = {f"{e.stage}/{e.lane}" if e.lane else e.stage for e in mine}
        assert set(found.times[task]) == stages
    assert not found.latest["1.2"].passed
    assert found.latest["1.1"].passed


def test_a_sync_sees_only_what_was_judged_up_to_the_state_it_draws(tmp_path: Path) -> None:
    store = Store.open(f"sqlite:///{tmp_path / 'odw.sqlite3'}")
    try:
        save_run(store, SPEC, run_id="r")
        rows = store.events.load("r")
        first = next(i for i, row in enumerate(rows, 1) if row["type"] == "attempt-judged")
        early = judged(store, "r", until=first)
        before = judged(store, "r", until=first - 1)
    finally:
        store.close()
    assert sum(len(t) for t in early.times.values()) == 1
    assert before.latest == {} and before.times == {}
