"""A task's stage artifacts on this process's disk before its evidence is read.

Assessment and salvage read the verdicts and salvage bundles ingest unpacked
under the run's directory. Ingest may have run in another process (each has
its own `ODW_DATA_DIR`), so before they read, every judged attempt of the task
whose artifact is not here is downloaded again from its workflow run, found
through the attempt's dispatch record. What cannot be read again (the run is
gone, its artifact expired) is logged and left out: the evidence is then what
remains, as it would be if the artifact had never come.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass

from app.apphost.adapters import attempt_dir
from app.apphost.judged import attempts_judged
from app.apphost.performers.base import HostContext
from app.apphost.performers.ingest import IngestPerformer, VerdictGitHub
from app.apphost.stage_runs import dispatch_record
from app.core.assessment import Assessment, SalvageResult
from app.core.effects import Assess, Salvage
from app.core.keys import attempt_key
from app.github.errors import GitHubError
from app.gitops.evidence.assess import LocalAssessor, LocalSalvager

log = logging.getLogger("odw.apphost")


def unpack_judged(context: HostContext, client: VerdictGitHub, run_id: str, task: str) -> int:
    """Download the artifact of each judged attempt of `task` missing here; how many came."""
    store, run_dir, came = context.store, context.run_dir(run_id), 0
    ingest = IngestPerformer(context)
    for e in attempts_judged(store, run_id):
        if e.task != task or e.verdict is None:
            continue
        if (attempt_dir(run_dir, task, e.stage, e.attempt, e.lane) / "verdict.json").is_file():
            continue
        key = attempt_key(run_id, task, e.stage, e.attempt, e.lane)
        workflow_run = int((dispatch_record(store.outbox.get(key)) or {}).get("workflowRun") or 0)
        if not workflow_run:
            continue
        try:
            run = client.runs.get_run(workflow_run)
        except GitHubError as exc:
            log.info("workflow run %s of %s: not read again: %s", workflow_run, key, exc)
            continue
        verdict, fault = ingest.verdict_of(
            client, run, run_id, task, e.stage, e.attempt, e.lane, e.token
        )
        if verdict is None:
            log.info("workflow run %s of %s: its artifact is gone: %s", workflow_run, key, fault)
            continue
        came += 1
    return came


@dataclass
class Unpacked:
    """The evidence ports, reading only once the task's artifacts are here."""

    assessor: LocalAssessor
    salvager: LocalSalvager
    fetch: Callable[[str], object]

    def assess(self, request: Assess) -> Assessment:
        self.fetch(request.task)
        return self.assessor.assess(request)

    def salvage(self, request: Salvage) -> SalvageResult:
        self.fetch(request.task)
        return self.salvager.salvage(request)
