"""Runs for the dashboard to show, made by the real core (`odw simulate`'s engine
with scripted outcomes) and saved in a store as the App saves its runs: the
event log, and the projection with the run key and result."""

from __future__ import annotations

import json
from typing import Any

from app.engine.scenario import load_scenario, simulate
from app.store import Store

HOSTILE_TITLE = (
    '<img src=x onerror="document.title=\'pwned\'"><script>document.title="pwned"</script>'
)
FAILING = {
    "roadmap": (
        "# Roadmap\n\n"
        f"- [ ] 1.1. Add a greeting {HOSTILE_TITLE}\n"
        "- [ ] 1.2. Add a farewell\n  - Requires 1.1.\n"
        "- [ ] 1.3. Add a changelog\n"
    ),
    "config": {"maxParallel": 2, "gateRetryBudget": 0, "routeBudget": 0},
    "outcomes": {"1.1": {"gates": ["gate:build:make test <b>failed</b>"]}},
}


RECOVERING = {
    "roadmap": "# Roadmap\n\n- [ ] 1.1. First\n- [ ] 1.2. Second\n",
    "survivors": [{"branch": "roadmap-1-2", "head": "abc123"}, {"branch": "roadmap-9-9"}],
}
"""A fresh launch that finds an earlier run's branches: one held, one unmapped."""


def many_tasks(n: int) -> dict[str, Any]:
    """`n` tasks, each after the one a third of its number (a wide tree), the
    first failing at its gates: most of the run waits."""
    lines = ["# Roadmap", ""]
    for k in range(1, n + 1):
        needs = f"\n  - Requires 1.{k // 3}." if k >= 3 else ""
        lines.append(f"- [ ] 1.{k}. Task number {k}{needs}")
    return {
        "roadmap": "\n".join(lines) + "\n",
        "config": {"maxParallel": 4, "gateRetryBudget": 0, "routeBudget": 0},
        "outcomes": {"1.1": {"gates": ["gate:build:make test failed"]}},
    }


def save_run(
    store: Store, spec: dict[str, Any], run_id: str = "gh-octo-demo-main-1", repo: str = "octo/demo"
) -> dict[str, Any]:
    """Simulate `spec` and save it as run `run_id` of `repo`; the run result."""
    scenario, _ = load_scenario(json.dumps({**spec, "runId": run_id}))
    result, events, state = simulate(scenario)
    store.events.append(run_id, events, 0)
    key = {"installation": 1, "repository": repo, "base": state.base}
    status = "finished" if state.ended else "running"
    store.projections.put_run(run_id, len(events), status, {"key": key, "result": result})
    return result
