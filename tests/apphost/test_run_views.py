"""`app/apphost/run_views.py` on rows as the store keeps them: a run's saved
view (its key and the core's `run_result`) and its tasks' saved handles."""

from __future__ import annotations

import json
from typing import Any

import pytest

from app.apphost.run_views import run_line, shown_status
from app.engine.scenario import load_scenario, simulate
from app.store.projections import RunView


def view(status: str, result: dict[str, Any]) -> RunView:
    key = {"installation": 7, "repository": "octo/demo", "base": "main"}
    return RunView("run-1", 3, status, {"key": key, "result": result}, 12.5)


@pytest.mark.parametrize(
    ("status", "halted", "running", "shown"),
    [
        ("running", None, False, "running"),
        ("running", "task 1.1 failed", False, "halted"),
        ("running", "task 1.1 failed", True, "running"),
        ("finished", "task 1.1 failed", False, "finished"),
    ],
    ids=["open", "stopped-idle", "stopped-still-running", "finished"],
)
def test_an_open_run_that_stopped_and_runs_nothing_shows_halted(
    status: str, halted: str | None, running: bool, shown: str
) -> None:
    results = [{"id": "1.1", "status": "running" if running else "failed"}]
    assert shown_status(status, {"halted": halted, "results": results}) == shown


def test_a_failed_run_reads_as_its_tasks_links_and_reason() -> None:
    scenario, _ = load_scenario(
        json.dumps(
            {
                "roadmap": "- [ ] 1.1. First\n- [ ] 1.2. Second. Requires 1.1.\n- [ ] 1.3. Third\n",
                "outcomes": {"1.1": {"implement": ["no-marker"]}},
            }
        )
    )
    result, _, _ = simulate(scenario)
    handles = {"1.1": {"pullUrl": "https://github.com/octo/demo/pull/4", "checkUrl": "c"}}
    line = run_line(view("running", result), handles)
    assert (line.repository, line.base, line.installation) == ("octo/demo", "main", 7)
    assert line.status == "halted" and line.halted == result["halted"]
    assert list(line.tasks_by_status.items()) == [("blocked", 1), ("failed", 1), ("landed", 1)]
    failed = next(t for t in line.tasks if t.id == "1.1")
    assert (failed.status, failed.stage, failed.pull_url, failed.check_url) == (
        "failed",
        "implement",
        "https://github.com/octo/demo/pull/4",
        "c",
    )
    assert failed.verdict is not None and failed.verdict.stage == "implement"
    assert failed.assessment == result["assessments"][0]["classification"]
    landed = next(t for t in line.tasks if t.id == "1.3")
    assert landed.sha and landed.pull_url is None
