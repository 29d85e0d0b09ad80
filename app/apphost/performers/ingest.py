"""`IngestRequested`: a completed workflow run, trusted only when it is ours, fed
once to its run.

The run is taken as its delivery (or the reconciler's read) described it, and
read again only when neither did; it is accepted only as the run recorded at
dispatch for a live attempt (`dispatched.rejection`); its verdict artifact is fetched and
checked, and the attempt ends with `StageFinished`. An ingestion that gives
up ends its attempt as an infrastructure fault.
"""

from __future__ import annotations

import logging
import shutil
from dataclasses import dataclass
from typing import Any, Protocol

from app.apphost import api
from app.apphost.adapters import attempt_dir
from app.apphost.app_effects import IngestRequested
from app.apphost.dispatched import Expected, rejection
from app.apphost.performers.base import Busy, HostContext
from app.apphost.stage_runs import (
    Attempt,
    attempt_of_run,
    dispatch_pending,
    job_noted,
    note_job,
)
from app.apphost.step import Step
from app.core.inputs import StageFinished
from app.core.judging import Fault
from app.core.verdict import Verdict
from app.github.errors import ArtifactExpired, GitHubError, NotFound, UnsafeArtifact
from app.github.protocols import Artifacts, Runs, WorkflowRun
from app.logs import log_context
from app.metrics import STAGE_SECONDS

log = logging.getLogger("odw.apphost")

ARTIFACT = "odw-verdict"
MAX_ARTIFACT_BYTES = 8 << 20


class VerdictGitHub(Protocol):
    """What reading a stage's verdict uses of one repository (a `RepositoryClient` is one)."""

    @property
    def artifacts(self) -> Artifacts: ...
    @property
    def runs(self) -> Runs: ...


class NotRecordedYet(Busy):
    """A run completed while a dispatch of its repository is not yet recorded:
    it may be that dispatch's run, so it is read again shortly, uncounted, until
    the dispatch settles (done, or given up as an infra fault)."""


@dataclass
class IngestPerformer:
    context: HostContext

    def perform(self, ingest: IngestRequested, *, again: bool) -> Any:
        client = self.context.github.repository(ingest.installation, ingest.repository)
        if ingest.run is not None:
            run = WorkflowRun(**ingest.run)
        else:
            try:
                run = client.runs.get_run(ingest.workflow_run)
            except NotFound:
                return {"ignored": "the workflow run does not exist"}
        return self.ingest_run(ingest.installation, ingest.repository, client, run)

    def gave_up(self, ingest: IngestRequested, error: str) -> None:
        """An ingestion that keeps failing ends its attempt as an infrastructure
        fault, so the task never stays `running` with nobody to answer it."""
        attempt = self.live_attempt(ingest.installation, ingest.repository, ingest.workflow_run)
        if attempt is None:
            return
        fault = Fault(
            kind="infra",
            detail=f"workflow run {ingest.workflow_run}: its verdict could not be read: {error}",
        )
        self._finished(attempt, None, fault)

    def ingest_run(
        self, installation: int, repository: str, client: VerdictGitHub, run: WorkflowRun
    ) -> Any:
        if run.status != "completed":
            return {"ignored": f"run is {run.status}"}
        attempt = self.live_attempt(installation, repository, run.id)
        why = (
            "no live attempt recorded its id at dispatch"
            if attempt is None
            else rejection(run, Expected(repository, attempt.branch, attempt.workflow_run))
        )
        if attempt is None and dispatch_pending(self.context.store, installation, repository):
            raise NotRecordedYet(f"a dispatch in {repository} is not recorded yet")
        if attempt is None or why is not None:
            # Logged, never counted: a stranger's run must not wear a task's budget down.
            log.warning(
                "workflow run %s in %s (%r on %r, started by %r) rejected: %s; nothing changed",
                run.id, repository, run.path, run.head_branch, run.triggering_actor, why,
            )  # fmt: skip
            return {"rejected": why}
        with log_context(run=attempt.run_id, task=attempt.task):
            verdict, fault = self.verdict_of(
                client, run, attempt.run_id, attempt.task, attempt.stage, attempt.number,
                attempt.lane, attempt.token,
            )  # fmt: skip
            self._note_job(client, run, attempt)
            step = self._finished(attempt, verdict, fault)
        if attempt.dispatched_at is not None:
            took = self.context.store.clock() - attempt.dispatched_at
            STAGE_SECONDS.labels(stage=attempt.stage).observe(max(0.0, took))
        return {
            "run": attempt.run_id,
            "task": attempt.task,
            "stage": attempt.stage,
            "events": len(step.events),
        }

    def _note_job(self, client: VerdictGitHub, run: WorkflowRun, attempt: Attempt) -> None:
        """The stage's Actions job, for the views: usually noted already from the
        `workflow_job` delivery (sent before the run's own); else read once, the
        failed job if one failed, else the first. A run whose jobs cannot be
        read keeps the run's own link."""
        if job_noted(self.context.store, attempt):
            return
        try:
            jobs = client.runs.list_jobs(run.id)
        except GitHubError as exc:
            log.info("workflow run %s: its jobs could not be read: %s", run.id, exc)
            return
        failed = [j for j in jobs if j.conclusion == "failure"]
        chosen = failed or jobs
        if chosen and chosen[0].html_url:
            note_job(self.context.store, attempt, chosen[0].html_url)

    def live_attempt(self, installation: int, repository: str, workflow_run: int) -> Attempt | None:
        return attempt_of_run(self.context.store, installation, repository, workflow_run)

    def _finished(self, attempt: Attempt, verdict: Verdict | None, fault: Fault | None) -> Step:
        """Tell the core an attempt is over, with its verdict or the fault that ended it."""
        finished = StageFinished(
            at=self.context.clock(),
            task=attempt.task,
            stage=attempt.stage,
            token=attempt.token,
            verdict=verdict,
            fault=fault,
        )
        return api.submit(self.context.store, attempt.run_id, finished)

    def verdict_of(
        self,
        client: VerdictGitHub,
        run: WorkflowRun,
        run_id: str,
        task: str,
        stage: str,
        attempt: int,
        lane: str,
        token: str,
    ) -> tuple[Verdict | None, Fault | None]:
        """The artifact's verdict, checked; or the infra fault that explains its absence."""

        def infra(detail: str) -> tuple[None, Fault]:
            return None, Fault(kind="infra", detail=f"workflow run {run.id}: {detail}")

        if run.conclusion == "cancelled":
            return infra("cancelled before it reported a verdict")
        try:
            # A just-completed run may list no artifact yet: read again, briefly.
            artifact = client.artifacts.find_artifact(run.id, ARTIFACT)
        except NotFound:
            return infra("vanished")
        if artifact is None:
            return infra(f"concluded {run.conclusion} without a {ARTIFACT} artifact")
        if artifact.expired:
            return infra(f"its {ARTIFACT} artifact expired before ODW read it")
        dest = attempt_dir(self.context.run_dir(run_id), task, stage, attempt, lane)
        shutil.rmtree(dest, ignore_errors=True)
        dest.mkdir(parents=True)
        try:
            client.artifacts.download_artifact(artifact, dest, MAX_ARTIFACT_BYTES)
            verdict = Verdict.model_validate_json((dest / "verdict.json").read_text("utf-8"))
        except ArtifactExpired:
            return infra(f"its {ARTIFACT} artifact expired before ODW read it")
        except UnsafeArtifact as exc:
            log.warning("workflow run %s: its %s artifact is refused: %s", run.id, ARTIFACT, exc)
            return infra(f"the {ARTIFACT} artifact was refused: {exc.reason}")
        except (OSError, ValueError, GitHubError) as exc:
            return infra(f"no valid verdict in the artifact: {type(exc).__name__}: {exc}")
        if (verdict.token, verdict.task, verdict.stage) != (token, task, stage):
            return infra("the verdict names another attempt (token, task or stage differ)")
        return verdict, None
