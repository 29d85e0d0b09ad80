"""Drive a soak: repositories with roadmaps on the fake GitHub, the App as a
cluster of processes on PostgreSQL, a chaos loop killing them, then an audit.
Shared by `tests/soak/test_soak.py` (short) and `bench/bench_soak.py` (full)."""

from __future__ import annotations

import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from app.store import Store
from tests.apphost.harness import (
    AGENT,
    FINAL_DELIVERY,
    ODW_YML,
    app_env,
    sample_files,
    wait_until,
)
from tests.conftest import odw_executable
from tests.fakegithub import FakeGitHub
from tests.fakegithub.actions_runner import LocalActions
from tests.service.live import service_env
from tests.soak.audit import Audit, audit, landings
from tests.soak.cluster import Chaos, Cluster


@dataclass(frozen=True)
class Size:
    serves: int = 2
    workers: int = 3
    repos: int = 20
    tasks: int = 5
    kill_every: float | None = 4.0  # seconds between kills; None: no chaos
    bound: float = 900.0  # seconds for every task to land


@dataclass
class Figures:
    seconds: float
    deliveries: int
    effects: int
    landed: int

    def line(self) -> str:
        s = max(self.seconds, 1e-9)
        return (
            f"{self.deliveries / s:.1f} deliveries/s, {self.effects / s:.1f} effects/s, "
            f"{self.landed / s * 60:.1f} landings/min"
        )


@dataclass
class Outcome:
    size: Size
    audit: Audit
    figures: Figures
    kills: int = 0
    notes: list[str] = field(default_factory=list)

    def summary(self) -> str:
        a = self.audit
        return (
            f"{sum(1 for n in a.landed.values() if n)} tasks landed, {len(a.landed_twice)} "
            f"landed twice, {len(a.effects_twice)} effects performed twice, {len(a.lost)} "
            f"deliveries lost, {self.kills} processes killed"
        )


def roadmap(tasks: int) -> tuple[str, list[str]]:
    """`tasks` tasks, every third requiring the one before it (some order, some
    parallel work)."""
    ids = [f"1.{k}" for k in range(1, tasks + 1)]
    lines = ["# Roadmap", ""]
    for k, task in enumerate(ids, start=1):
        lines.append(f"- [ ] {task}. Add item {k}")
        if k % 3 == 0:
            lines.append(f"  - Requires {ids[k - 2]}.")
    return "\n".join(lines) + "\n", ids


def soak(root: Path, database_url: str, size: Size) -> Outcome:
    """Run `size` to landed (or its bound), settle, audit."""
    fake = FakeGitHub(root / "github").start()
    env = app_env(
        fake,
        root,
        ODW_LOG_LEVEL="INFO",
        ODW_EXECUTORS="2",
        ODW_RETRY_BASE_SECONDS="0.2",
        ODW_RETRY_MAX_SECONDS="5",
        ODW_DELIVERY_LEASE_SECONDS="10",
        ODW_EFFECT_LEASE_SECONDS="15",
        ODW_RECONCILE_SECONDS="10",
    )
    cluster = Cluster(
        root / "cluster",
        database_url,
        fake.webhooks.secret,
        env,
        serves=size.serves,
        workers=size.workers,
        serve_workers=1 if size.workers else 2,
    )
    actions = LocalActions(
        fake, root / "actions", AGENT, env={"SCRIPTED_AGENT_STATE": str(root / "agent")}
    )
    chaos: Chaos | None = None
    store = Store.open(database_url)  # creates the schema before any process starts
    notes: list[str] = []
    try:
        cluster.start()
        fake.webhooks.receivers(cluster.receivers)
        actions.start()
        text, ids = roadmap(size.tasks)
        tasks = {f"octo/soak-{i:02d}": ids for i in range(size.repos)}
        for repo in tasks:
            fake.create_repository(repo, sample_files(text, ODW_YML))
        installation = fake.install("octo", list(tasks))
        wait_until(
            "the cluster to record the installation",
            lambda: all(
                store.installations.installation_for_repository(r) == installation.id for r in tasks
            ),
            timeout=60,
        )
        cli_env = service_env(root / "cli", fake.webhooks.secret, ODW_DATABASE_URL=database_url)
        cli_env.update(env)
        if size.kill_every is not None:
            chaos = Chaos(cluster, size.kill_every).start()
        began = time.monotonic()
        for repo in tasks:
            _app_run(repo, cli_env)
        landed_at = _until_landed(fake, tasks, began + size.bound)
        # The figures are for the time to landed; the settling after is not timed.
        delivered = len({d.id for d in fake.webhooks.delivered if d.status and d.status < 300})
        effects = sum(1 for e in store.outbox.list() if e.status == "done")
        if chaos is not None:
            chaos.stop()
            notes += chaos.errors
        cluster.ensure_running()
        if not _settle(fake, store, 120):
            notes.append("did not settle within 120 s after the chaos stopped")
        dead = [e.key for e in store.outbox.list() if e.status == "dead"]
        if dead:
            notes.append(f"effects given up (dead): {dead[:5]}")
        result = audit(fake, store, tasks)
        figures = Figures(landed_at - began, delivered, effects, sum(result.landed.values()))
        if actions.errors:
            notes.append(f"runner errors: {actions.errors[:3]}")
        if fake.violations:
            notes.append(f"requests GitHub would refuse: {fake.violations[:3]}")
        return Outcome(size, result, figures, chaos.kills if chaos else 0, notes)
    finally:
        if chaos is not None:
            chaos.stop()
        actions.stop()
        cluster.stop()
        store.close()
        fake.stop()


def _app_run(repo: str, env: dict[str, str]) -> None:
    proc = subprocess.run(
        [odw_executable(), "app", "run", repo],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"odw app run {repo}: {proc.stderr.strip()}")


def _until_landed(fake: FakeGitHub, tasks: dict[str, list[str]], deadline: float) -> float:
    """When every task landed, or the deadline (the audit names what did not)."""
    while time.monotonic() < deadline:
        if all(set(ids) <= set(landings(fake, repo)) for repo, ids in tasks.items()):
            return time.monotonic()
        fake.webhooks.redeliver_failed()  # the operator's redelivery of failed deliveries
        time.sleep(1)
    return time.monotonic()


def _settle(fake: FakeGitHub, store: Store, timeout: float) -> bool:
    """Every delivery finished and the outbox drained, redelivering what failed."""

    def settled() -> bool:
        for delivery in fake.webhooks.deliveries:
            row = None if delivery.dropped else store.inbox.get(delivery.id)
            if not delivery.dropped and (row is None or row.status not in FINAL_DELIVERY):
                return False
        return all(e.status in ("done", "dead") for e in store.outbox.list())

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        fake.webhooks.flush()
        if settled():
            return True
        fake.webhooks.redeliver_failed()
        time.sleep(1)
    return False
