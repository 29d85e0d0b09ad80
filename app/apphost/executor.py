"""The outbox executor: performs recorded effects through the ports, feeds results back.

Each outbox entry is claimed under a lease, performed, and settled. Core
effects go through `app.engine.perform.perform`, exactly as local mode's
engine performs them; the input an effect's result becomes is decided at once
(`step.decide_step`). An entry claimed a second time (its executor died)
repeats nothing visible: a dispatch is looked for by its token before it is
sent again, an integration reads the base before it runs again, a check run
or comment is updated by its saved id. App entries: `app-start` (read the
settings at the base's SHA and start a run), `app-ingest` (a completed
workflow run: re-read, accepted only as the run recorded for a live attempt
by `dispatched.rejection`, fetch the verdict artifact, feed `StageFinished`;
an ingestion that gives up ends its attempt as an infrastructure fault),
`app-tick` (tick the roadmap box of a task a person merged, on the base,
under the merge lock) and `app-views` (bring checks, PRs and comments up to
date).
"""

from __future__ import annotations

import logging
import os
import shutil
import socket
import threading
import uuid
from collections.abc import Callable, Collection, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

from app.apphost import api
from app.apphost.adapters import (
    ActionsStages,
    AppPorts,
    MirrorIntegrator,
    app_repo,
    attempt_dir,
    evidence_ports,
    git_url,
)
from app.apphost.dispatched import AmbiguousRun, Expected, rejection, tag_key
from app.apphost.installation_access import check as check_credentials
from app.apphost.pr_landing import RunLanding
from app.apphost.run_settings import RunSettings, parse_settings
from app.apphost.runs import RunKey, find_open, live_attempts, new_run_id, run_meta
from app.apphost.step import VIEWS, Step, decide_step, effect_of, load_state, views_key
from app.apphost.sync import ViewSync
from app.apphost.views import config_check
from app.commands.launch import start_for
from app.core.config import ConfigError
from app.core.effects import DispatchStage
from app.core.held import NotAnOpenTask
from app.core.identity import INTEGRATOR_IDENTITY, Identity
from app.core.inputs import StageFinished, StartRun
from app.core.judging import Fault
from app.core.naming import ROADMAP_PATH, task_branch
from app.core.repo_config import CONFIG_PATH, ConfigProblem, read_repo_config
from app.core.roadmap_edit import TickError, is_ticked, tick
from app.core.roadmap_parse import parse_roadmap
from app.core.state import RunState
from app.core.verdict import Verdict
from app.engine.perform import gave_up, perform
from app.github import GitHubApp
from app.github.client import RepositoryClient
from app.github.errors import GitHubError, NotFound, UnsafeArtifact
from app.github.protocols import Artifacts, CheckRunFields, WorkflowRun
from app.gitops.evidence.repo import LocalRepo
from app.gitops.integrate import PROTECTED_BASE
from app.gitops.lock import LeaseMergeLock
from app.gitops.tick import tick_on_base
from app.store import Store
from app.store.outbox import Effect as Entry

log = logging.getLogger("odw.apphost")

ARTIFACT = "odw-verdict"
MAX_ARTIFACT_BYTES = 8 << 20
MAX_ATTEMPTS = 5
LEASE_SECONDS = 120.0


Performer = Callable[["Executor", dict[str, Any]], Any]
# Outbox kinds other features add (a reply to a command, a reaction): each
# performer gets the executor (its GitHub client, store, clock) and the payload.
PERFORMERS: dict[str, Performer] = {}


def performer(kind: str) -> Callable[[Performer], Performer]:
    """Register how entries of outbox `kind` are performed (a feature's own effects)."""

    def add(fn: Performer) -> Performer:
        PERFORMERS[kind] = fn
        return fn

    return add


class VerdictGitHub(Protocol):
    """What reading a stage's verdict uses of one repository (a `RepositoryClient` is one)."""

    @property
    def artifacts(self) -> Artifacts: ...


class Busy(RuntimeError):
    """Another executor holds what this entry needs; it is retried shortly."""


class NotRecordedYet(Busy):
    """A run completed while a dispatch of its repository is not yet recorded:
    it may be that dispatch's run, so it is read again shortly, uncounted, until
    the dispatch settles (done, or given up as an infra fault)."""


@dataclass(frozen=True)
class Attempt:
    """A live stage attempt, as its workflow run is matched to it."""

    run_id: str
    task: str
    stage: str
    number: int
    lane: str
    token: str
    branch: str
    workflow_run: int  # the run id recorded at dispatch


@dataclass(frozen=True)
class HostConfig:
    data_dir: Path
    bot_login: str = "odw[bot]"
    details_url: str | None = None
    retry_base_seconds: float = 2.0
    lease_seconds: float = LEASE_SECONDS


class Executor:
    def __init__(
        self,
        store: Store,
        github: GitHubApp,
        config: HostConfig,
        *,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        self.store = store
        self.github = github
        self.config = config
        self.clock = clock
        self.owner = f"{socket.gethostname()}:{os.getpid()}:executor:{uuid.uuid4().hex[:8]}"
        self.lock = LeaseMergeLock(store.leases, self.owner)
        self.wake = threading.Event()
        # Run names show a keyed hash of each attempt's token, keyed by the App's own key.
        self.tag_key = tag_key(github.context.credentials.private_key)

    # -- the loop ----------------------------------------------------------------

    def run_once(self, limit: int = 1, kinds: Collection[str] | None = None) -> int:
        """Claim and perform up to `limit` due entries (of `kinds`, when given);
        how many were handled."""
        entries = self.store.outbox.claim(self.owner, self.config.lease_seconds, limit, kinds=kinds)
        for entry in entries:
            self._handle(entry)
        return len(entries)

    def run(
        self, stop: threading.Event, poll: float = 0.2, kinds: Collection[str] | None = None
    ) -> None:
        while not stop.is_set():
            try:
                busy = self.run_once(kinds=kinds)
            except Exception:  # the database went away: log, wait, go on
                log.exception("outbox executor")
                busy = 0
            if not busy:
                self.wake.wait(poll)
                self.wake.clear()

    def _handle(self, entry: Entry) -> None:
        try:
            result = self.perform(entry)
        except Exception as exc:
            self._failed(entry, exc)
            return
        self.store.outbox.complete(entry.key, self.owner, result)

    def _failed(self, entry: Entry, exc: Exception) -> None:
        error = f"{type(exc).__name__}: {exc}"
        if isinstance(exc, Busy):  # not a failure: someone else is on it
            self.store.outbox.fail(entry.key, self.owner, error, retry_at=self.store.clock() + 0.5)
            return
        if entry.attempts < MAX_ATTEMPTS:
            delay = self.config.retry_base_seconds * 2 ** (entry.attempts - 1)
            log.warning("effect %s failed (attempt %d): %s", entry.key, entry.attempts, error)
            self.store.outbox.fail(
                entry.key, self.owner, error, retry_at=self.store.clock() + delay
            )
            return
        log.error("effect %s gave up after %d attempts: %s", entry.key, entry.attempts, error)
        self.store.outbox.fail(entry.key, self.owner, error, retry_at=None)
        if entry.kind == api.INGEST:
            self._ingest_gave_up(entry.payload, error)
        elif "effect" in entry.payload:
            # The core hears that its effect will never be done, so the run moves on.
            answer = gave_up(effect_of(entry.payload), error, self.clock())
            if answer is not None:
                api.submit(self.store, entry.payload["run_id"], answer)

    def perform(self, entry: Entry) -> Any:
        extra = PERFORMERS.get(entry.kind)
        if extra is not None:
            return extra(self, entry.payload)
        if entry.kind == api.START:
            return self.start(entry.payload)
        if entry.kind == api.INGEST:
            return self.ingest(entry.payload)
        if entry.kind == api.TICK:
            return self.tick(entry.payload)
        if entry.kind == VIEWS:
            return self.views(entry.payload["run_id"], again=entry.attempts > 1)
        return self.core(entry)

    # -- pieces ------------------------------------------------------------------

    def client(self, key: RunKey) -> RepositoryClient:
        return self.github.repository(key.installation, key.repository)

    def run_dir(self, run_id: str) -> Path:
        return self.config.data_dir / "runs" / run_id

    def url(self, key: RunKey) -> str:
        return git_url(self.github.context.api_url, key.repository)

    def ports(self, run_id: str, state: RunState, meta: dict[str, Any], again: bool) -> AppPorts:
        key = RunKey.from_json(meta["key"])
        client = self.client(key)
        identity = _identity(meta)
        url = self.url(key)
        assert state.roadmap is not None
        repo = app_repo(
            self.config.data_dir,
            key.installation,
            key.repository,
            url,
            client.git_token(write=True),
        )
        assessor, salvager = evidence_ports(repo, self.run_dir(run_id), identity)
        return AppPorts(
            stages=ActionsStages(
                client,
                run_id,
                str(meta.get("sha") or ""),
                again=again,
                tag_key=self.tag_key,
                bot=self.config.bot_login,
            ),
            integrator=MirrorIntegrator(
                client,
                url,
                run_id,
                state.roadmap,
                self.config.data_dir,
                self.lock,
                identity,
                bool(meta.get("deleteTaskBranches", True)),
                method=str(meta.get("integration") or "push"),
                landing=RunLanding(self.store, run_id),
            ),
            assessor=assessor,
            salvager=salvager,
            clock=self.clock,
        )

    def core(self, entry: Entry) -> Any:
        run_id = entry.payload["run_id"]
        effect = effect_of(entry.payload)
        state = load_state(self.store, run_id)
        if state.ended:
            return {"skipped": "the run has ended"}
        meta = run_meta(self.store, run_id)
        ports = self.ports(run_id, state, meta, again=entry.attempts > 1)
        stages = ports.stages
        assert isinstance(stages, ActionsStages)
        handles = self.store.projections.tasks(run_id).get(effect.task or "", {})
        stages.branch_ready = bool(handles.get("branch"))
        try:
            result = perform(effect, ports, again=entry.attempts > 1)
        except AmbiguousRun as exc:
            # Two runs could be this dispatch's: an infrastructure fault, never a guess.
            log.warning("run %s: %s", run_id, exc)
            answer = gave_up(effect, str(exc), self.clock())
            if answer is not None:
                api.submit(self.store, run_id, answer)
            return {"ambiguous": str(exc)}
        done: dict[str, Any] = {}
        if isinstance(effect, DispatchStage):
            sent = stages.dispatched.get(effect.key)
            if sent is not None:
                done = {
                    "workflowRun": sent.run_id,
                    "url": sent.html_url,
                    "foundBy": sent.found_by,
                    "token": effect.token,
                    "task": effect.task,
                    "stage": effect.stage,
                    "dispatchedAt": self.store.clock(),
                    "deadline": effect.deadline_seconds,
                }
                self._note(run_id, effect.task, jobUrl=sent.html_url, branch=True)
        if result is not None:
            api.submit(self.store, run_id, result)
        return done

    def _note(self, run_id: str, task: str, **values: Any) -> None:
        """Remember what the views need about a task (its last Actions run, its branch)."""
        self.store.projections.merge_task(run_id, task, values)

    def start(self, payload: dict[str, Any]) -> Any:
        """Read the settings at the base's SHA; start a run unless one is open."""
        key = RunKey.from_json(payload["key"])
        if key.base == api.DEFAULT_BASE:
            key = replace(key, base=self.client(key).contents.default_branch())
        lease = f"app-start:{key.installation}:{key.repository}:{key.base}"
        with self.holding(lease, f"another executor is starting a run of {key.label()}"):
            return self._start(key, payload)

    def _start(self, key: RunKey, payload: dict[str, Any]) -> Any:
        open_id = find_open(self.store, key)
        if open_id is not None:
            self.views(open_id)
            return {"run": open_id, "started": False}
        client = self.client(key)
        # Fail closed: credentials that cannot do what the run needs start a
        # run that halts at once (its check says what to grant).
        preflight = check_credentials(client)
        if any(m.needed_for == "read the base" for m in preflight.missing):
            log.warning("cannot start %s: %s", key.label(), preflight.halt())
            return {"blocked": preflight.blocked()}
        sha = payload.get("sha") or client.contents.branch_sha(key.base)
        if sha is None:
            return {"skipped": f"{key.repository} has no branch {key.base}"}
        config_file = client.contents.file_at(CONFIG_PATH, sha)
        roadmap_text = _text(client.contents.file_at(ROADMAP_PATH, sha))
        try:
            settings = parse_settings(config_file, roadmap_text)
        except ConfigProblem as p:
            if payload.get("onlyIfAuto") and p.path != CONFIG_PATH and not _auto(config_file):
                return {"skipped": "auto is off"}
            view = config_check(p.path, p.field, p.line, p.message)
            client.checks.create_check_run(
                view.name,
                sha,
                CheckRunFields(
                    status=view.status,
                    conclusion=view.conclusion,
                    title=view.title,
                    summary=view.summary,
                    external_id=f"config:{sha}",
                ),
            )
            return {"config": str(p)}
        if payload.get("onlyIfAuto"):
            if not settings.config.auto:
                return {"skipped": "auto is off"}
            before = str(payload.get("before") or "")
            earlier = (
                _text(client.contents.file_at(ROADMAP_PATH, before)) if before.strip("0") else None
            )
            if earlier == roadmap_text:
                return {"skipped": "the push did not change the roadmap"}
        settings = _count_merged(settings, api.merged_by_people(self.store, key))
        run_id = new_run_id(key)
        run_config, held, survivors = settings.config.config, [], []
        if payload.get("options"):
            try:
                launch = start_for(
                    payload["options"], run_config, settings.roadmap, key.base,
                    lambda: self._clone(key), self.run_dir(run_id),
                )  # fmt: skip
            except (ConfigError, NotAnOpenTask) as exc:
                return {"refused": str(exc)}
            run_config, held, survivors = launch.config, launch.held, launch.survivors
        meta = {
            "key": key.to_json(),
            "sha": sha,
            "by": payload.get("by"),
            "identity": (
                settings.config.identity.model_dump() if settings.config.identity else None
            ),
            "deleteTaskBranches": settings.config.delete_task_branches,
            "integration": settings.config.integration,
        }
        decide_step(
            self.store,
            run_id,
            StartRun(
                at=self.clock(),
                run_id=run_id,
                base=key.base,
                roadmap=settings.roadmap_text,
                config=run_config,
                held=held,
                survivors=survivors,
                preflight=preflight,
            ),
            api.tokens,
            meta=meta,
        )
        log.info("run %s started for %s at %s", run_id, key.label(), sha[:12])
        return {"run": run_id, "started": True}

    def tick(self, payload: dict[str, Any]) -> Any:
        """Tick the box of a task a person merged, on the base (the integrator's
        merge lock and mirror). A base that refuses pushes is said on the run
        check; later runs count the task done from the recorded merge anyway."""
        run_id, task = str(payload["run_id"]), str(payload["task"])
        meta = run_meta(self.store, run_id)
        key = RunKey.from_json(meta["key"])
        landing = RunLanding(self.store, run_id)
        if meta.get("integration") == "pull-request" or landing.protected():
            return self._untickable(run_id, key, task, "the base takes changes only through PRs")
        client = self.client(key)
        report = tick_on_base(
            self.url(key),
            key.base,
            task_branch(task),
            task,
            note=f"Pull request #{payload['number']} was merged by {payload['by']}"
            + (f" as {payload['sha']}." if payload.get("sha") else "."),
            run_id=run_id,
            lock=self.lock,
            data_dir=self.config.data_dir,
            roadmap_path=ROADMAP_PATH,
            token=client.git_token(write=True),
            identity=_identity(meta) or INTEGRATOR_IDENTITY,
        )
        if report.ticked:
            log.info("run %s: %s", run_id, report.summary)
            return {"ticked": True, "sha": report.sha, "summary": report.summary}
        if PROTECTED_BASE in report.summary:
            landing.mark_protected(key.base)
            return self._untickable(run_id, key, task, report.summary)
        raise RuntimeError(report.summary)  # retried with backoff

    def _untickable(self, run_id: str, key: RunKey, task: str, why: str) -> Any:
        log.warning(
            "run %s: %s merged by a person but its box cannot be ticked on %s (%s); "
            "later runs count it done from the merge",
            run_id, task, key.base, why,
        )  # fmt: skip
        return {"ticked": False, "why": why}

    def _clone(self, key: RunKey) -> LocalRepo:
        client = self.client(key)
        return app_repo(
            self.config.data_dir,
            key.installation,
            key.repository,
            self.url(key),
            client.git_token(write=True),
        )

    def views(self, run_id: str, *, again: bool = False) -> Any:
        """Bring the run's checks, PRs and comments up to date (one syncer per run).

        While another executor syncs this run, one follow-up is queued for the
        log's current version (coalesced by its key) and this entry is done:
        the follow-up starts after, so the newest state is always shown.
        """
        try:
            with self.holding(f"app-views:{run_id}", f"views of {run_id} are being synced"):
                return self._views(run_id, again)
        except Busy:
            version = self.store.events.version(run_id)
            self.store.outbox.enqueue(
                f"{views_key(run_id, version)}/after-busy",
                VIEWS,
                {"run_id": run_id},
                run_id=run_id,
                not_before=self.store.clock() + 0.3,
            )
            return {"deferred": version}

    def _views(self, run_id: str, again: bool) -> Any:
        state = load_state(self.store, run_id)
        meta = run_meta(self.store, run_id)
        key = RunKey.from_json(meta["key"])
        repo_url = self.url(key).removesuffix(".git")
        ViewSync(
            self.store,
            self.client(key),
            run_id,
            self.run_dir(run_id),
            str(meta.get("sha") or ""),
            self.config.bot_login,
            repository_url=repo_url,
            details_url=self.config.details_url,
            again=again,
        ).sync(state)
        return {"version": state.version}

    @contextmanager
    def holding(self, lease: str, busy: str) -> Iterator[None]:
        """Hold `lease` for one piece of work: each hold is its own owner, so two
        threads of this executor exclude each other; busy -> retried later."""
        owner = f"{self.owner}:{uuid.uuid4().hex[:8]}"
        if not self.store.leases.acquire(lease, owner, self.config.lease_seconds):
            raise Busy(busy)
        try:
            yield
        finally:
            self.store.leases.release(lease, owner)

    # -- workflow runs ---------------------------------------------------------------

    def ingest(self, payload: dict[str, Any]) -> Any:
        """A completed workflow run, trusted only when it is ours; fed once to its run."""
        installation, repository = int(payload["installation"]), str(payload["repository"])
        client = self.github.repository(installation, repository)
        try:
            run = client.runs.get_run(int(payload["workflowRun"]))
        except NotFound:
            return {"ignored": "the workflow run does not exist"}
        return self.ingest_run(installation, repository, client, run)

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
        if attempt is None and self._dispatch_pending(installation, repository):
            raise NotRecordedYet(f"a dispatch in {repository} is not recorded yet")
        if attempt is None or why is not None:
            # Logged, never counted: a stranger's run must not wear a task's budget down.
            log.warning(
                "workflow run %s in %s (%r on %r, started by %r) rejected: %s; nothing changed",
                run.id, repository, run.path, run.head_branch, run.triggering_actor, why,
            )  # fmt: skip
            return {"rejected": why}
        verdict, fault = self.verdict_of(
            client, run, attempt.run_id, attempt.task, attempt.stage, attempt.number,
            attempt.lane, attempt.token,
        )  # fmt: skip
        step = self._finished(attempt, verdict, fault)
        return {
            "run": attempt.run_id,
            "task": attempt.task,
            "stage": attempt.stage,
            "events": len(step.events),
        }

    def _attempts(self, installation: int, repository: str) -> Iterator[tuple[Attempt, Any]]:
        """Each live attempt of the repository's open runs, with its dispatch entry."""
        for a in live_attempts(self.store, installation, repository):
            entry = self.store.outbox.get(a.key)
            wf = int((dispatch_record(entry) or {}).get("workflowRun") or 0)
            attempt = Attempt(a.run_id, a.task, a.stage, a.attempt, a.lane, a.token, a.branch, wf)
            yield attempt, entry

    def live_attempt(self, installation: int, repository: str, workflow_run: int) -> Attempt | None:
        """The live attempt whose dispatch recorded `workflow_run` as its run."""
        for attempt, _ in self._attempts(installation, repository):
            if attempt.workflow_run == workflow_run:
                return attempt
        return None

    def _dispatch_pending(self, installation: int, repository: str) -> bool:
        return any(
            entry is not None and entry.status in ("pending", "in_flight")
            for _, entry in self._attempts(installation, repository)
        )

    def _ingest_gave_up(self, payload: dict[str, Any], error: str) -> None:
        """An ingestion that keeps failing ends its attempt as an infrastructure
        fault, so the task never stays `running` with nobody to answer it."""
        attempt = self.live_attempt(
            int(payload["installation"]), str(payload["repository"]), int(payload["workflowRun"])
        )
        if attempt is None:
            return
        fault = Fault(
            kind="infra",
            detail=f"workflow run {payload['workflowRun']}: its verdict could not be read: {error}",
        )
        self._finished(attempt, None, fault)

    def _finished(self, attempt: Attempt, verdict: Verdict | None, fault: Fault | None) -> Step:
        """Tell the core an attempt is over, with its verdict or the fault that ended it."""
        finished = StageFinished(
            at=self.clock(),
            task=attempt.task,
            stage=attempt.stage,
            token=attempt.token,
            verdict=verdict,
            fault=fault,
        )
        return api.submit(self.store, attempt.run_id, finished)

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
            artifacts = [a for a in client.artifacts.list_artifacts(run.id) if a.name == ARTIFACT]
        except NotFound:
            return infra("vanished")
        if not artifacts or artifacts[0].expired:
            return infra(f"concluded {run.conclusion} without a {ARTIFACT} artifact")
        dest = attempt_dir(self.run_dir(run_id), task, stage, attempt, lane)
        shutil.rmtree(dest, ignore_errors=True)
        dest.mkdir(parents=True)
        try:
            client.artifacts.download_artifact(artifacts[0], dest, MAX_ARTIFACT_BYTES)
            verdict = Verdict.model_validate_json((dest / "verdict.json").read_text("utf-8"))
        except UnsafeArtifact as exc:
            log.warning("workflow run %s: its %s artifact is refused: %s", run.id, ARTIFACT, exc)
            return infra(f"the {ARTIFACT} artifact was refused: {exc.reason}")
        except (OSError, ValueError, GitHubError) as exc:
            return infra(f"no valid verdict in the artifact: {type(exc).__name__}: {exc}")
        if (verdict.token, verdict.task, verdict.stage) != (token, task, stage):
            return infra("the verdict names another attempt (token, task or stage differ)")
        return verdict, None


def dispatch_record(entry: Entry | None) -> dict[str, Any] | None:
    """What a dispatch entry recorded once done (its run id, when, its deadline)."""
    if entry is None or entry.status != "done" or not isinstance(entry.result, dict):
        return None
    return entry.result


def _text(data: bytes | None) -> str | None:
    if data is None:
        return None
    return data.decode("utf-8", errors="replace")


def _auto(config_file: bytes | None) -> bool:
    try:
        return read_repo_config(config_file).auto
    except ConfigProblem:
        return True  # the file itself is wrong: always say so


def _count_merged(settings: RunSettings, merged: dict[str, Any]) -> RunSettings:
    """The roadmap as the base reads once the boxes of tasks people merged are
    ticked: a merged pull request is the evidence, whatever the trailers say."""
    text = settings.roadmap_text
    for task in merged:
        if not is_ticked(text, task):
            try:
                text = tick(text, task)
            except TickError:
                continue  # no longer in the roadmap (or ambiguous): nothing to count
    if text == settings.roadmap_text:
        return settings
    return replace(
        settings,
        roadmap_text=text,
        roadmap=parse_roadmap(text, external_met=settings.config.config.external_met),
    )


def _identity(meta: dict[str, Any]) -> Identity | None:
    data = meta.get("identity")
    return Identity.model_validate(data) if data else None
