"""An outbox effect the executor can never perform ends its task with the reason,
instead of leaving the run waiting forever for an answer that never comes."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from pathlib import Path

from app.apphost import api
from app.apphost.executor import MAX_ATTEMPTS, Executor, HostConfig
from app.apphost.runs import RunKey, find_open
from app.apphost.step import decide_step, effect_of, load_state
from app.core.config import RunConfig
from app.core.effects import DispatchStage
from app.core.inputs import StageFinished, StartRun
from app.engine.scripted import completion
from app.github.auth import AppCredentials
from app.github.client import GitHubApp
from app.github.retry import RetryPolicy
from app.store import Store
from tests.fakegithub import FakeGitHub

ROADMAP = "# Roadmap\n\n- [ ] 1.1. Add a greeting\n- [ ] 1.2. Add a farewell\n  - Requires 1.1.\n"
REPO = "octo/readonly"
# An installation that was never granted `contents: write`: every push token is
# refused (422), however often it is asked for. (An installation GitHub does not
# know at all is not retried: see tests/apphost/test_app_refusals.py.)
PERMISSIONS = {"contents": "read", "metadata": "read"}


def _pass_every_stage(store: Store, run_id: str) -> None:
    """Answer each dispatch as a passing runner would, until only integration is left."""
    for _ in range(40):
        entries = store.outbox.claim("runner", 60, 10, kinds=["dispatch-stage"])
        if not entries:
            return
        for entry in entries:
            d = effect_of(entry.payload)
            assert isinstance(d, DispatchStage)
            c = completion(d, "pass")
            api.submit(
                store,
                run_id,
                StageFinished(
                    at=datetime.now(UTC), task=c.task, stage=c.stage, token=c.token,
                    verdict=c.verdict, fault=c.fault,
                ),
            )  # fmt: skip
            store.outbox.complete(entry.key, "runner", attempt=entry.attempts)


def test_an_integration_github_always_refuses_ends_the_task_as_an_infra_fault(
    tmp_path: Path, fake: FakeGitHub
) -> None:
    store = Store.open(f"sqlite:///{tmp_path / 'odw.sqlite3'}")
    fake.create_repository(REPO, {"docs/roadmap.md": ROADMAP})
    key = RunKey(installation=fake.install("octo", [REPO], PERMISSIONS).id, repository=REPO,
                 base="main")  # fmt: skip
    try:
        run_id = "gh-octo-readonly-main-1"
        start = StartRun(
            at=datetime.now(UTC), run_id=run_id, roadmap=ROADMAP, config=RunConfig(maxParallel=1)
        )
        decide_step(store, run_id, start, api.tokens, meta={"key": key.to_json(), "sha": "0" * 40})
        _pass_every_stage(store, run_id)
        [integrate] = [e for e in store.outbox.list(run_id=run_id) if e.kind == "integrate"]

        github = GitHubApp(
            AppCredentials(fake.app_id, fake.private_key_pem),
            fake.api_url,
            policy=RetryPolicy(max_attempts=1),
        )
        config = HostConfig(data_dir=tmp_path / "data", retry_base_seconds=0.01)
        executor = Executor(store, github, config)
        deadline = time.monotonic() + 30
        while (entry := store.outbox.get(integrate.key)) and entry.status != "dead":
            assert time.monotonic() < deadline, entry
            executor.run_once(kinds=["integrate"])
            time.sleep(0.02)
        assert entry.attempts == MAX_ATTEMPTS

        state = load_state(store, run_id)
        task = state.tasks["1.1"]
        assert task.status == "infra-fault", task
        assert "integration failed" in task.detail and "422" in task.detail, task.detail
        # Nothing is left waiting: no answer or attempt is outstanding, 1.2 is
        # parked behind 1.1, and the run stays open to offer the retry.
        assert state.tasks["1.2"].status == "blocked"
        assert not task.awaiting and not list(state.live_attempts())
        assert find_open(store, key) == run_id
    finally:
        store.close()
