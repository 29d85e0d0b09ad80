"""`odw run --local`: the engine on a real repository, durable and resumable.

State lives in the clone's git directory (`<git-common-dir>/odw/`): the SQLite
store (`local.sqlite3`: event log, run projection, leases), the integration
mirror (`data/`) and each run's stage outputs (`runs/<run-id>/`). A run is
owned through two leases held by this process and heartbeated: `local-base:
<base>` (one run per base at a time) and `run:<run-id>`. Running the same
command again after a crash finds the unfinished run for the base and resumes
it by replaying its log; a finished run means a new run starts.
"""

from __future__ import annotations

import os
import secrets
import threading
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from app.core.identity import RUNNER_IDENTITY
from app.core.inputs import StartRun
from app.engine.driver import Engine, Ports
from app.gitops.evidence.assess import LocalAssessor, LocalSalvager
from app.gitops.evidence.landing import LocalIntegrator
from app.gitops.evidence.repo import LocalRepo, RepoError
from app.gitops.evidence.survivors import find_survivors
from app.liveness import HOST, process_alive
from app.local.eventlog import StoreEventLog, unfinished_run
from app.local.launch import Plan, Request, load_plan, pick_base
from app.local.origin_access import check as check_credentials
from app.local.stages import LocalStages
from app.store import Store
from app.store.store import sqlite_url

LEASE_TTL = 30.0
WAIT_SLICE = 1.0
Feed = Callable[[Sequence[dict[str, Any]]], None]


class RunRefused(Exception):
    """Another live process owns this run or base (exit 1)."""


@dataclass(frozen=True)
class Outcome:
    result: dict[str, Any]
    resumed: bool
    held: dict[str, str]

    @property
    def exit_code(self) -> int:
        return exit_code_of(self.result)


def exit_code_of(result: dict[str, Any]) -> int:
    """1 when the run halted or a task failed, else 0: `halted` and the code always agree."""
    bad = {"failed", "infra-fault", "deferred"}
    failed = any(r["status"] in bad for r in result["results"])
    return 1 if result["halted"] or failed else 0


def prepare(request: Request) -> tuple[LocalRepo, Plan]:
    """Fetch origin's base and read settings and roadmap from it."""
    repo = LocalRepo.open(request.path)
    heads = repo.origin_heads()

    def read(branch: str, path: str) -> str | None:
        if branch not in heads:
            raise RepoError(f"origin has no branch {branch}")
        repo.fetch(branch)
        return repo.show(branch, path)

    base = pick_base(request, repo.origin_default_branch(), read)
    if base not in heads:
        raise RepoError(f"origin has no branch {base}")
    return repo, load_plan(request, base, read, heads)


class Ownership:
    """The base and run leases of this process, heartbeated on a thread."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.owner = f"odw-run-local:{HOST}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        self.names: list[str] = []
        self._stop = threading.Event()
        self._beat: threading.Thread | None = None

    def take(self, name: str, what: str) -> None:
        leases = self.store.leases
        if not leases.acquire(name, self.owner, LEASE_TTL):
            holder = leases.holder(name)
            # On this host a dead pid is proof enough: the lease was left by a crash.
            if holder is not None and holder.host == HOST and not process_alive(HOST, holder.pid):
                leases.release(name, holder.owner)
            if not leases.acquire(name, self.owner, LEASE_TTL):
                holder = leases.holder(name)
                who = f"pid {holder.pid} on {holder.host}" if holder else "another process"
                raise RunRefused(f"{what} is being run by a live process ({who}); not starting")
        self.names.append(name)
        if self._beat is None:
            self._beat = threading.Thread(target=self._heartbeat, daemon=True, name="odw-lease")
            self._beat.start()

    def _heartbeat(self) -> None:
        while not self._stop.wait(LEASE_TTL / 3):
            for name in list(self.names):
                self.store.leases.heartbeat(name, self.owner, LEASE_TTL)

    def release(self) -> None:
        self._stop.set()
        if self._beat is not None:
            self._beat.join(timeout=5)
        for name in self.names:
            self.store.leases.release(name, self.owner)


def new_run_id() -> str:
    return f"local-{datetime.now(UTC):%Y%m%dT%H%M%SZ}-{secrets.token_hex(3)}"


def execute(
    repo: LocalRepo,
    plan: Plan,
    *,
    feed: Feed | None = None,
    on_run: Callable[[str, bool], None] | None = None,
) -> Outcome:
    """Resume the base's unfinished run or start a new one, and drive it to the end."""
    repo.state_dir.mkdir(parents=True, exist_ok=True)
    store = Store.open(sqlite_url(repo.state_dir / "local.sqlite3"))
    own = Ownership(store)
    stages: LocalStages | None = None
    try:
        own.take(f"local-base:{plan.base}", f"base {plan.base}")
        run_id = unfinished_run(store, plan.base)
        resumed = run_id is not None
        run_id = run_id or new_run_id()
        own.take(f"run:{run_id}", f"run {run_id}")
        if on_run is not None:
            on_run(run_id, resumed)
        run_dir = repo.state_dir / "runs" / run_id
        meta: dict[str, Any] = {
            "base": plan.base,
            "origin": repo.origin_url,
            "startedAt": datetime.now(UTC).isoformat(),
            "held": plan.held,
        }
        stored = store.projections.run(run_id) if resumed else None
        if stored is not None:
            meta = stored.data  # the held ids and start time of the run being resumed
        log = StoreEventLog(store, run_id, meta, listener=feed)
        settings = plan.settings
        identity = settings.identity or RUNNER_IDENTITY
        stages = LocalStages(repo, settings, run_dir)
        ports = Ports(
            log=log,
            stages=stages,
            integrator=LocalIntegrator(
                repo,
                run_id,
                plan.roadmap,
                identity=identity,
                delete_branches=settings.delete_task_branches,
            ),
            assessor=LocalAssessor(repo, run_dir),
            salvager=LocalSalvager(repo, run_dir, settings.identity),
            tokens=lambda: secrets.token_hex(16),
            clock=lambda: datetime.now(UTC),
        )
        engine = Engine(ports, wait_timeout=WAIT_SLICE)
        # Fail closed before anything is dispatched: a fresh run records the
        # blocked recovery and the auth halt; a resumed one is not continued.
        preflight = check_credentials(repo, plan.base)
        if resumed and not preflight.ok:
            raise RunRefused(preflight.halt())
        # A fresh run hands the core every surviving task branch with host evidence;
        # a resumed run already has them in its log.
        survivors = (
            []
            if resumed
            else find_survivors(
                repo, plan.base, plan.roadmap, repo.origin_heads(), repo.state_dir / "runs"
            )
        )
        engine.open(
            StartRun(
                at=datetime.now(UTC),
                run_id=run_id,
                base=plan.base,
                roadmap=plan.roadmap_text,
                config=settings.config,
                held=sorted(plan.held),
                survivors=survivors,
                preflight=preflight,
            )
        )
        result = engine.run()
        held = meta.get("held")
        if not isinstance(held, dict):
            held = dict.fromkeys(engine.state.held_out(), "held when the run started")
        # A held survivor that was resumed and landed is no longer held.
        landed = {r["id"] for r in result["results"] if r["status"] == "landed"}
        result["held"] = [{"id": k, "reason": v} for k, v in held.items() if k not in landed]
        return Outcome(result, resumed, held)
    except BaseException:
        if stages is not None:
            stages.abort()
        raise
    finally:
        if stages is not None:
            stages.close()
        own.release()
        store.close()
