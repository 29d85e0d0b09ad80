"""The dashboard's page of a 300-task run, rendered whole: goal under one second.

The run is made by the real core (`odw simulate`'s engine: a wide dependency
tree whose first task fails at its gates, so most tasks wait) and saved in a
SQLite store as the App saves its runs, its snapshot included (as the App's
last step leaves it). Each timing is one GET of the run's page through the
Flask app with the admin token: the projection, the state from its snapshot,
the page model, the graph's layout and the template. Median and slowest of
several, wall clock; the overview page beside it.
"""

from __future__ import annotations

import statistics
import tempfile
import time
from pathlib import Path

from flask.testing import FlaskClient

from app.apphost.snapshots import load_state, snapshot_text
from app.service_settings import Settings
from app.store import Store, sqlite_url
from app.web.app import create_app
from tests.web.dashboard_runs import many_tasks, save_run

TASKS = 300
GOAL_SECONDS = 1.0
TIMED = 9
ADMIN = "bench-dashboard-admin-token"
RUN = "gh-octo-bench-main-1"


def _timed(client: FlaskClient, path: str) -> list[float]:
    took = []
    for _ in range(TIMED):
        start = time.perf_counter()
        resp = client.get(path, headers={"Authorization": f"Bearer {ADMIN}"})
        took.append(time.perf_counter() - start)
        assert resp.status_code == 200, resp.status_code
    return took


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="odw-bench-dashboard-") as tmp:
        store = Store.open(sqlite_url(Path(tmp) / "odw.sqlite3"))
        try:
            save_run(store, many_tasks(TASKS), RUN, "octo/bench")
            view = store.projections.run(RUN)
            assert view is not None
            state = load_state(store, RUN)
            store.projections.put_run(
                RUN, view.version, view.status, view.data, state=snapshot_text(state)
            )
            settings = Settings(webhook_secret="s" * 32, data_dir=Path(tmp), admin_token=ADMIN)  # type: ignore[arg-type]
            client = create_app(settings, store).test_client()
            _timed(client, f"/dashboard/runs/{RUN}")  # warm: templates compiled
            page = _timed(client, f"/dashboard/runs/{RUN}")
            overview = _timed(client, "/dashboard/")
        finally:
            store.close()
    median, worst = statistics.median(page), max(page)
    verdict = "ok" if worst < GOAL_SECONDS else "OVER GOAL"
    print(
        f"dashboard: run page of {TASKS} tasks {median * 1000:.0f} ms median, "
        f"{worst * 1000:.0f} ms slowest (goal < {GOAL_SECONDS * 1000:.0f} ms: {verdict}); "
        f"overview {statistics.median(overview) * 1000:.0f} ms"
    )
