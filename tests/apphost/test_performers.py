"""One performer per outbox kind, in one table: every kind the App or the core
writes has one; an entry nobody can read is settled at once with the reason,
never retried; rows written before the payloads were typed still read; and
an effect builds only the ports it uses."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import get_args

import pytest

from app.apphost import api
from app.apphost.app_effects import (
    VIEWS,
    AppEffect,
    IngestRequested,
    StartRequested,
    TickRequested,
)
from app.apphost.executor import Executor, HostConfig
from app.apphost.performers.table import PERFORMERS
from app.apphost.runs import RunKey
from app.apphost.step import decide_step
from app.commands.host import Launch
from app.core.config import RunConfig
from app.core.effects import Effect
from app.core.inputs import StartRun
from app.github.auth import AppCredentials
from app.github.client import GitHubApp
from app.store import Store
from tests.apphost.harness import REPO, sample_files
from tests.fakegithub import FakeGitHub

ROADMAP = "# Roadmap\n\n- [ ] 1.1. Add a greeting\n"


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    s = Store.open(f"sqlite:///{tmp_path / 'odw.sqlite3'}")
    yield s
    s.close()


def _executor(store: Store, fake: FakeGitHub, data_dir: Path) -> Executor:
    github = GitHubApp(AppCredentials(fake.app_id, fake.private_key_pem), fake.api_url)
    return Executor(store, github, HostConfig(data_dir=data_dir, retry_base_seconds=0.01))


def test_every_kind_written_has_exactly_its_performer() -> None:
    (union, _) = get_args(AppEffect)
    app = {t.model_fields["kind"].default: t for t in get_args(union)}
    core = {t.model_fields["kind"].default for t in get_args(Effect)}
    assert set(PERFORMERS) == set(app) | core
    for kind, model in app.items():
        assert PERFORMERS[kind].model is model, kind
    assert VIEWS in app  # what `decide_step` writes after each step


@pytest.mark.parametrize(
    ("kind", "payload", "why"),
    [
        ("app-frobnicate", {"run_id": "r"}, "no performer does kind 'app-frobnicate'"),
        ("app-ingest", {"installation": 1}, "its payload is not a IngestRequested"),
        ("dispatch-stage", {"run_id": "r", "effect": {"kind": "nope"}}, "not a CoreEntry"),
    ],
    ids=["an-unknown-kind", "an-app-payload-missing-fields", "a-core-payload-of-no-effect"],
)
def test_an_entry_no_performer_can_read_is_settled_at_once_with_the_reason(
    store: Store, fake: FakeGitHub, tmp_path: Path, caplog: pytest.LogCaptureFixture,
    kind: str, payload: dict[str, object], why: str,
) -> None:  # fmt: skip
    store.outbox.enqueue("old/1", kind, payload)
    executor = _executor(store, fake, tmp_path / "data")
    with caplog.at_level(logging.ERROR, "odw.apphost"):
        assert executor.run_once() == 1
    entry = store.outbox.get("old/1")
    assert entry is not None
    assert (entry.status, entry.attempts) == ("dead", 1)
    assert entry.last_error is not None and why in entry.last_error
    assert f"effect old/1 ({kind}) is settled unperformed" in caplog.text
    assert executor.run_once() == 0  # never claimed again


def test_rows_written_before_the_payloads_were_typed_still_read() -> None:
    key = {"installation": 5, "repository": "octo/demo", "base": "main"}
    options = {"by": "mona", "dryRun": True, "maxParallel": 3, "resumeMode": "continue",
               "resumeTaskId": "1.2"}  # fmt: skip
    start = StartRequested.model_validate(
        {"key": key, "by": "mona", "sha": None, "onlyIfAuto": True, "before": "b" * 40,
         "options": options}
    )  # fmt: skip
    assert start.key == RunKey(5, "octo/demo", "main")
    assert (start.only_if_auto, start.before) == (True, "b" * 40)
    assert start.launch == Launch(
        "mona", dry_run=True, max_parallel=3, resume_mode="continue", resume_task="1.2"
    )
    ingest = IngestRequested.model_validate(
        {"installation": 5, "repository": "octo/demo", "workflowRun": 99}
    )
    assert ingest.workflow_run == 99
    tick = TickRequested.model_validate(
        {"run_id": "r", "task": "1.1", "number": 3, "sha": None, "by": "mona"}
    )
    assert (tick.task, tick.number) == ("1.1", 3)


def test_a_new_start_row_reads_back_as_written(store: Store) -> None:
    launch = Launch("mona", task="1.2", max_parallel=2)
    key = RunKey(5, "octo/demo", "main")
    assert api.request_start(store, key, by="mona", launch=launch, nonce="n")
    (entry,) = store.outbox.list()
    start = PERFORMERS[entry.kind].model.model_validate(entry.payload)
    assert start == StartRequested(key=key, by="mona", launch=launch)


def test_a_dispatch_builds_only_the_stage_port(
    store: Store, fake: FakeGitHub, tmp_path: Path
) -> None:
    repo = fake.create_repository(REPO, sample_files(ROADMAP))
    installation = fake.install("octo", [REPO])
    main = repo.git.sha("refs/heads/main")
    run_id = "gh-octo-demo-main-1"
    key = RunKey(installation.id, REPO, "main")
    start = StartRun(
        at=datetime.now(UTC), run_id=run_id, roadmap=ROADMAP, config=RunConfig(maxParallel=1)
    )
    decide_step(store, run_id, start, api.tokens, meta={"key": key.to_json(), "sha": main})
    data = tmp_path / "data"
    executor = _executor(store, fake, data)

    assert executor.run_once(kinds=["dispatch-stage"]) == 1

    (entry,) = [e for e in store.outbox.list(run_id=run_id) if e.kind == "dispatch-stage"]
    assert entry.status == "done" and entry.result["workflowRun"], entry
    # Evidence and integration need the App's clone; a dispatch never made it.
    assert not (data / "clones").exists()
