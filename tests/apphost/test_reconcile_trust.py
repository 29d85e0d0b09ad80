"""The reconciler reads an attempt's run by the id its dispatch recorded and
takes it only when `dispatched.rejection` does: a recorded id whose run is not
the stage workflow's dispatch on the task branch is never ingested."""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from pathlib import Path

import pytest

from app.apphost import api
from app.apphost.executor import Executor, HostConfig
from app.apphost.reconcile import Reconciler
from app.apphost.runs import RunKey
from app.apphost.step import decide_step, effect_of
from app.core.config import RunConfig
from app.core.effects import DispatchStage
from app.core.inputs import StartRun
from app.github.auth import AppCredentials
from app.github.client import GitHubApp
from app.store import Store
from tests.apphost.harness import REPO, sample_files
from tests.fakegithub import FakeGitHub, routes_actions

ROADMAP = "# Roadmap\n\n- [ ] 1.1. Add a greeting\n"


@pytest.mark.parametrize(
    ("who", "ref", "ingested"),
    [("bot", "roadmap-1-1", 1), ("wanda", "roadmap-1-1-x", 0)],
    ids=["the-dispatched-run-is-ingested", "a-run-on-another-branch-is-not"],
)
def test_the_reconciler_takes_a_recorded_run_only_when_the_rule_does(
    tmp_path: Path, fake: FakeGitHub, caplog: pytest.LogCaptureFixture, who: str, ref: str,
    ingested: int,
) -> None:  # fmt: skip
    repo = fake.create_repository(REPO, sample_files(ROADMAP))
    installation = fake.install("octo", [REPO])
    main = repo.git.sha("refs/heads/main")
    for branch in ("roadmap-1-1", "roadmap-1-1-x"):
        repo.git.git("update-ref", f"refs/heads/{branch}", str(main))
    store = Store.open(f"sqlite:///{tmp_path / 'odw.sqlite3'}")
    try:
        run_id = "gh-octo-demo-main-1"
        key = RunKey(installation.id, REPO, "main")
        start = StartRun(
            at=datetime.now(UTC), run_id=run_id, roadmap=ROADMAP, config=RunConfig(maxParallel=1)
        )
        decide_step(store, run_id, start, api.tokens, meta={"key": key.to_json(), "sha": main})
        (entry,) = store.outbox.claim("test", 60, 1, kinds=["dispatch-stage"])
        dispatch = effect_of(entry.payload)
        assert isinstance(dispatch, DispatchStage)
        inputs = {"stage": dispatch.stage, "task": "1.1", "token": dispatch.token}
        inputs.update({"tag": "t", "run-id": run_id})
        login = fake.bot_login if who == "bot" else who
        fake.add_collaborator(REPO, "wanda", "write")
        run = routes_actions.create_run(fake, repo, "odw-stage.yml", ref, inputs, login)
        fake.complete_run(run.id, "success")
        # The dispatch recorded this run's id (a run a writer started, were it not ODW's).
        record = {"workflowRun": run.id, "token": dispatch.token, "dispatchedAt": 0.0}
        store.outbox.complete(entry.key, "test", record, attempt=entry.attempts)

        github = GitHubApp(AppCredentials(fake.app_id, fake.private_key_pem), fake.api_url)
        executor = Executor(store, github, HostConfig(data_dir=tmp_path / "data"))
        with caplog.at_level(logging.WARNING, "odw.apphost"):
            found = Reconciler(executor).pass_once()
        ingests = [e for e in store.outbox.list() if e.kind == api.INGEST]
        assert (found["ingested"], len(ingests)) == (ingested, ingested)
        if not ingested:
            assert f"workflow run {run.id} is not taken: it ran on 'roadmap-1-1-x'" in caplog.text
    finally:
        store.close()
