"""Landing through pull requests in App mode: the method per run, and the
one-time note on the run check when branch protection refuses a push.

The note lives in the run's projection under its own row (`LANDING`), never in
the rows the view sync rewrites, so it is written once and read by the sync.
"""

from __future__ import annotations

from typing import Any

from app.core.sanitize import inline_code
from app.store import Store

LANDING = "~landing"  # run_tasks row of the run's landing method
NOTICE = (
    "Branch protection refused a push to {base}: ODW lands the remaining tasks through "
    "pull requests (squash merge once the required checks pass)."
)


class RunLanding:
    """Whether a run's base refused pushes (then every landing goes through a PR)."""

    def __init__(self, store: Store, run_id: str) -> None:
        self.store = store
        self.run_id = run_id

    def _row(self) -> dict[str, Any]:
        return dict(self.store.projections.tasks(self.run_id).get(LANDING, {}))

    def protected(self) -> bool:
        return bool(self._row().get("protected"))

    def mark_protected(self, base: str) -> None:
        if self.protected():
            return
        values = {"protected": True, "notice": NOTICE.format(base=inline_code(base, 100))}
        self.store.projections.merge_task(self.run_id, LANDING, values, status="noted")


def notice(handles: dict[str, dict[str, Any]]) -> str:
    return str(handles.get(LANDING, {}).get("notice") or "")
