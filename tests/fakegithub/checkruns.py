"""A completed check run stays completed, as on GitHub.

"Once a check run transitions from the in_progress state to completed state,
it's not possible to modify its status nor its conclusion further" (GitHub
Support, https://github.community/t/stale-check-runs/120566; the order is
queued -> in_progress -> completed). Apps that PATCHed a completed run back to
`in_progress` for a re-run found it stayed as it was and now create a new check
run instead: https://github.com/Mergifyio/mergify/pull/1989 ("GitHub doesn't
allow to change the status of a completed check_runs"),
https://github.com/lyft/atlantis/pull/265,
https://github.com/taskcluster/taskcluster/issues/5085,
https://github.com/openci-org/openci/pull/1461. Its output (title, summary,
text, annotations) may still be updated.

No source records the exact answer GitHub gives to such a PATCH, so the fake
refuses it loudly, 422 Validation Failed, and stores nothing: a client that
tries fails its test instead of passing on a write GitHub would not make.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from tests.fakegithub import state as s
from tests.fakegithub.server import Reply


def refuse_reopening(run: s.CheckRun, body: dict[str, Any]) -> None:
    """A PATCH moving a completed check run's status or conclusion: 422."""
    if run.status != "completed":
        return
    run.patched_when_completed.append(dict(body))
    status = body.get("status")
    conclusion = body.get("conclusion")
    if status not in (None, "completed"):
        moved = f"status to {status!r}"
    elif conclusion is not None and conclusion != run.conclusion:
        moved = f"conclusion from {run.conclusion!r} to {conclusion!r}"
    else:
        return
    raise Reply(
        422,
        {
            "message": "Validation Failed",
            "errors": [
                {
                    "resource": "CheckRun",
                    "code": "custom",
                    "field": "status" if status not in (None, "completed") else "conclusion",
                    "message": f"a completed check run cannot change its {moved}",
                }
            ],
            "documentation_url": "https://docs.github.com/rest/checks/runs#update-a-check-run",
        },
    )


def reopening_patches(check_runs: Iterable[s.CheckRun]) -> list[tuple[int, str, dict[str, Any]]]:
    """Every PATCH that sent a status or conclusion to an already completed
    check run (id, name, body), refused or not: a client should send none."""
    return [
        (run.id, run.name, body)
        for run in check_runs
        for body in run.patched_when_completed
        if "status" in body or "conclusion" in body
    ]
