"""Stage dispatch (`workflow_dispatch`) and workflow runs and jobs.

A dispatch asks for `return_run_details` (GitHub answers 200 with the run's
id since 2026-02). GitHub Enterprise Server before that answers 400/422 to the
field: the dispatch is sent once more without it, and the 204 that answers it
names no run, so the caller's `find` (its own rule for which listed run is the
one it dispatched) is polled until the run is listed.

When the answer to a dispatch is lost (a timeout, a 5xx after GitHub created
the run), `find` is polled the same bounded while before the dispatch is sent
again: a new run shows in GitHub's run lists only seconds after it exists
(dbt-labs/actions#107: "it does not even include the submitted workflow"), so
one look at once would miss it and a second run would push to the same branch.
"""

from __future__ import annotations

import calendar
import time
from collections.abc import Callable, Mapping
from typing import Any

from app.github.conditional import ConditionalGets
from app.github.errors import GitHubError, NotFound, Unprocessable
from app.github.protocols import DispatchedRun, WorkflowJob, WorkflowRun
from app.github.transport import Transport

DISPATCH_PERMISSIONS = {"actions": "write"}
RUN_PERMISSIONS = {"actions": "read"}
MAX_INPUTS = 25
# How long a dispatched run is looked for in the run lists: 10 looks over 27s.
FIND_ATTEMPTS = 10
FIND_PAUSE = 3.0


def run_from_json(data: dict[str, Any]) -> WorkflowRun:
    return WorkflowRun(
        id=int(data["id"]),
        name=data.get("name") or "",
        display_title=data.get("display_title") or "",
        event=data.get("event") or "",
        status=data.get("status") or "",
        conclusion=data.get("conclusion"),
        run_attempt=int(data.get("run_attempt") or 1),
        head_branch=data.get("head_branch"),
        head_sha=data.get("head_sha") or "",
        path=data.get("path") or "",
        html_url=data.get("html_url") or "",
        head_repository=(data.get("head_repository") or {}).get("full_name"),
        # Older GitHub Enterprise Server has no `triggering_actor`: the actor started it.
        triggering_actor=(data.get("triggering_actor") or data.get("actor") or {}).get("login"),
        created_at=_epoch(data.get("created_at")),
    )


def _epoch(stamp: Any) -> float | None:
    """GitHub's `2020-01-22T19:33:08Z` as epoch seconds."""
    if not isinstance(stamp, str):
        return None
    try:
        return float(calendar.timegm(time.strptime(stamp, "%Y-%m-%dT%H:%M:%SZ")))
    except ValueError:
        return None


class GitHubRuns:
    def __init__(self, transport: Transport) -> None:
        self._t = transport
        self._polls = ConditionalGets(transport)

    def get_run(self, run_id: int) -> WorkflowRun:
        return self._t.call(
            "runs.get", lambda: run_from_json(self._polls.get(f"/actions/runs/{run_id}"))
        )

    def knows_workflow(self, workflow: str) -> bool:
        """Whether GitHub knows `workflow` (a file name) for dispatch: only a
        workflow whose file is on the default branch is found (404 otherwise)."""

        def read() -> bool:
            self._t.request("GET", f"/actions/workflows/{workflow}")
            return True

        try:
            return self._t.call("workflows.get", read)
        except NotFound:
            return False

    def list_runs(
        self, workflow: str, *, branch: str | None = None, event: str | None = None
    ) -> list[WorkflowRun]:
        """The newest 100 runs of a workflow file (enough to recover missed events)."""
        params: dict[str, Any] = {"per_page": 100}
        if branch:
            params["branch"] = branch
        if event:
            params["event"] = event
        data = self._t.call(
            "runs.list",
            lambda: self._polls.get(f"/actions/workflows/{workflow}/runs", params),
        )
        return [run_from_json(run) for run in data.get("workflow_runs", [])]

    def list_jobs(self, run_id: int) -> list[WorkflowJob]:
        def fetch() -> list[WorkflowJob]:
            jobs = self._t.paginate(f"/actions/runs/{run_id}/jobs", "jobs")
            return [
                WorkflowJob(j["id"], j["name"], j["status"], j.get("conclusion"), j["html_url"])
                for j in jobs
            ]

        return self._t.call("runs.jobs", fetch)


class GitHubDispatch:
    def __init__(self, transport: Transport) -> None:
        self._t = transport

    def dispatch(
        self,
        workflow: str,
        ref: str,
        inputs: Mapping[str, str],
        find: Callable[[], DispatchedRun | None] | None = None,
    ) -> DispatchedRun:
        """Dispatch `workflow` on `ref`. `find` says which listed run the dispatch
        created; it is asked when GitHub names no run (GHES) or when the answer
        was lost (so a dispatch that reached GitHub is not sent twice)."""
        if len(inputs) > MAX_INPUTS:
            raise ValueError(f"a dispatch takes at most {MAX_INPUTS} inputs, got {len(inputs)}")
        values = {key: str(value) for key, value in inputs.items()}

        def send(details: bool) -> Any:
            wf = self._t.repo.get_workflow(workflow)
            if details:
                return wf.create_dispatch(ref, values, throw=True, return_run_details=True)
            return wf.create_dispatch(ref, values, throw=True)

        # A lost answer: look for the run as long as a listed run may lag, then resend.
        reread = (lambda: self._find(find)) if find is not None else None
        try:
            sent = self._t.call(
                "actions.dispatch", lambda: send(True), kind="create", reread=reread
            )
        except Unprocessable:
            # Older GHES rejects `return_run_details`; a real input error fails again below.
            sent = self._t.call(
                "actions.dispatch", lambda: send(False), kind="create", reread=reread
            )
        if isinstance(sent, DispatchedRun):
            return sent
        if sent is not True and getattr(sent, "id", None):
            return DispatchedRun(int(sent.id), str(sent.html_url), "return_run_details")
        found = self._find(find) if find is not None else None
        if found is None:
            raise GitHubError(
                "actions.dispatch", 204, f"dispatched {workflow} on {ref} but its run is not listed"
            )
        return found

    def _find(self, find: Callable[[], DispatchedRun | None]) -> DispatchedRun | None:
        for attempt in range(FIND_ATTEMPTS):
            found = find()
            if found is not None:
                return found
            if attempt + 1 < FIND_ATTEMPTS:
                # Bounded (27s) and part of the dispatch's own work, not a wait GitHub
                # asked for: slept in place even near an effect's `waits_end_by`, so
                # a lost answer is never put back half-looked-for and sent again.
                self._t.ctx.sleeper.sleep(FIND_PAUSE)
        return None
