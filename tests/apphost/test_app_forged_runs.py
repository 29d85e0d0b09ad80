"""Only runs ODW dispatched decide a task (issue 25, item 1), end to end.

A repository writer who is not a maintainer can dispatch the stage workflow
themselves, on another branch, from a copy under another file name, or with a
live attempt's run name and token copied, and upload an `odw-verdict` that
passes. None of those runs changes the task or spends an attempt; each is
logged with the reason, and the genuine run's verdict still lands the task.
On GitHub Enterprise Server (no run id in the dispatch's answer) the id is
resolved once from the bot's own dispatch, and two candidates are an
infrastructure fault, never a guess.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable
from typing import Any

import pytest

from app.cli.init_cmd import render_workflow
from tests.apphost.harness import (
    ODW_YML,
    REPO,
    Service,
    explain,
    install_sample,
    results,
    sample_files,
    trailers,
    wait_until,
)
from tests.fakegithub import FakeGitHub, routes_actions
from tests.fakegithub import state as s
from tests.fakegithub.actions_runner import LocalActions
from tests.fakegithub.faults import Fault, delay
from tests.fakegithub.state import Repository

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("apphost")]

ONE = "# Roadmap\n\n- [ ] 1.1. Add a greeting\n"
WRITER = "wanda"
BRANCH = "roadmap-1-1"
# A copy of the stage workflow a writer added earlier (GitHub dispatches any
# workflow file that declares `workflow_dispatch`).
COPY = "odw-stage.yml.yml"


@pytest.fixture
def forge_repo(fake: FakeGitHub, service: Service) -> Repository:
    files = sample_files(ONE, ODW_YML)
    files[f".github/workflows/{COPY}"] = render_workflow("octo/odw@v1", 30)
    repo = install_sample(fake, service, files)
    fake.add_collaborator(REPO, WRITER, "write")
    return repo


def _events(service: Service) -> list[dict[str, Any]]:
    """The (only) run's event log; empty before the run starts."""
    store = service.store()
    try:
        runs = [v.run_id for v in store.projections.runs()]
        return list(store.events.load(runs[0])) if runs else []
    finally:
        store.close()


def _dispatches(service: Service) -> dict[str, dict[str, Any]]:
    """Each stage dispatch's token -> what its outbox entry recorded ({} until done)."""
    store = service.store()
    try:
        (run,) = [v.run_id for v in store.projections.runs()]
        return {
            e.payload["effect"]["token"]: e.result if isinstance(e.result, dict) else {}
            for e in store.outbox.list(run_id=run)
            if e.kind == "dispatch-stage"
        }
    finally:
        store.close()


def _rejection(service: Service, run_id: int) -> str:
    """The service's log line rejecting workflow run `run_id` ("" until there is one)."""
    found = re.search(rf"workflow run {run_id} in {REPO} \(.*rejected: .*", service.log())
    return found.group(0) if found else ""


def _forge_verdict(fake: FakeGitHub, forged: s.WorkflowRun, inputs: dict[str, str]) -> None:
    """The writer's own run uploads a verdict that passes, naming the live attempt."""
    verdict = {
        "stage": inputs["stage"],
        "task": inputs["task"],
        "token": inputs["token"],
        "passed": True,
        "checks": [],
    }
    fake.start_run(forged.id)
    fake.upload_artifact(forged.id, "odw-verdict", {"verdict.json": json.dumps(verdict)})
    fake.complete_run(forged.id, "success")


def _held_plan(actions: LocalActions) -> threading.Event:
    """Hold ODW's plan run of 1.1 until the returned event is set."""
    release = threading.Event()

    def hold(run: s.WorkflowRun) -> bool:
        if run.inputs.get("stage") == "plan":
            release.wait(120)
        return True

    actions.admit = hold
    return release


def _another_branch(fake: FakeGitHub, repo: Repository, inputs: dict[str, str]) -> s.WorkflowRun:
    sha = repo.git.sha(f"refs/heads/{BRANCH}")
    repo.git.git("update-ref", "refs/heads/wanda-1-1", str(sha))
    return fake.dispatch_as(WRITER, REPO, "odw-stage.yml", "wanda-1-1", inputs)


def _another_workflow_file(
    fake: FakeGitHub, repo: Repository, inputs: dict[str, str]
) -> s.WorkflowRun:
    return fake.dispatch_as(WRITER, REPO, COPY, BRANCH, inputs)


def _copied_run_name(fake: FakeGitHub, repo: Repository, inputs: dict[str, str]) -> s.WorkflowRun:
    """The stage workflow on the task branch with every input (token, tag) copied:
    the same run name; only its id (and who started it) differ."""
    return fake.dispatch_as(WRITER, REPO, "odw-stage.yml", BRANCH, inputs)


Forgery = Callable[[FakeGitHub, Repository, dict[str, str]], s.WorkflowRun]


@pytest.mark.parametrize(
    "forge",
    [_another_branch, _another_workflow_file, _copied_run_name],
    ids=["another-branch", "another-workflow-file", "copied-run-name-foreign-run-id"],
)
def test_a_writers_forged_run_changes_nothing_and_the_genuine_run_still_lands(
    fake: FakeGitHub,
    service: Service,
    forge_repo: Repository,
    actions: LocalActions,
    forge: Forgery,
) -> None:
    release = _held_plan(actions)
    service.run_app()
    genuine = wait_until(
        "ODW's plan run",
        lambda: next((r for r in fake.runs.values() if r.inputs.get("stage") == "plan"), None),
        timeout=60,
    )
    assert genuine.inputs["token"] not in genuine.display_title  # the name shows only a tag
    wait_until(
        "its id to be recorded",
        lambda: _dispatches(service).get(genuine.inputs["token"], {}).get("workflowRun"),
        timeout=30,
    )
    before = _events(service)
    forged = forge(fake, forge_repo, dict(genuine.inputs))
    assert fake.shapes.workflow_run(forged)["triggering_actor"]["login"] == WRITER
    _forge_verdict(fake, forged, genuine.inputs)
    line = wait_until("the forged run's rejection", lambda: _rejection(service, forged.id))
    assert "no live attempt recorded its id at dispatch" in line
    assert _events(service) == before, "a forged run changed the run (or spent an attempt)"
    release.set()
    wait_until("the task to land", lambda: trailers(forge_repo) == ["1.1"], timeout=240)
    assert results(service)["1.1"]["status"] == "landed", explain(service, actions)
    plans = [e for e in _events(service) if e["type"] == "attempt-judged" and e["stage"] == "plan"]
    assert [(e["attempt"], e["outcome"]) for e in plans] == [(1, "passed")]
    assert plans[0]["verdict"]["headAfter"], "the plan judged is the one the runner made"


@pytest.fixture
def ghes(request: pytest.FixtureRequest) -> bool:
    """GitHub Enterprise Server (no run id in a dispatch's answer) for the tests so named."""
    return "ghes" in request.node.name


def _second_run_on_dispatch(
    fake: FakeGitHub, make: Callable[[s.WorkflowRun], s.WorkflowRun]
) -> list[s.WorkflowRun]:
    """While ODW's first dispatch waits for its (late) 204, `make` starts
    another run like it; the second run is returned in the list."""
    made: list[s.WorkflowRun] = []
    fake.inject(
        "POST", "/repos/{owner}/{repo}/actions/workflows/{workflow_id}/dispatches", delay(2.0), 2
    )

    def hook(run: s.WorkflowRun) -> None:
        if not made and run.triggering_actor == fake.bot_login:
            made.append(make(run))

    fake.on_dispatch.insert(0, hook)
    return made


def test_ghes_resolution_records_the_bots_run_never_a_writers_copy(
    fake: FakeGitHub, service: Service, forge_repo: Repository, actions: LocalActions
) -> None:
    def writers_copy(run: s.WorkflowRun) -> s.WorkflowRun:
        forged = fake.dispatch_as(WRITER, REPO, "odw-stage.yml", run.ref, dict(run.inputs))
        _forge_verdict(fake, forged, run.inputs)
        return forged

    made = _second_run_on_dispatch(fake, writers_copy)
    service.run_app()
    wait_until("the task to land", lambda: trailers(forge_repo) == ["1.1"], timeout=240)
    (forged,) = made
    genuine = next(r for r in fake.runs.values() if r.inputs == forged.inputs and r.id != forged.id)
    first = _dispatches(service)[genuine.inputs["token"]]
    assert (first["workflowRun"], first["foundBy"]) == (genuine.id, "resolved")
    assert "no live attempt recorded its id" in _rejection(service, forged.id)
    plans = [e for e in _events(service) if e["type"] == "attempt-judged" and e["stage"] == "plan"]
    assert [(e["attempt"], e["outcome"]) for e in plans] == [(1, "passed")]
    assert plans[0]["verdict"]["headAfter"], "the plan judged is the one the runner made"


def test_ghes_two_candidate_runs_are_an_infrastructure_fault_never_a_guess(
    fake: FakeGitHub, service: Service, forge_repo: Repository, actions: LocalActions
) -> None:
    def twin(run: s.WorkflowRun) -> s.WorkflowRun:
        # The same dispatch made twice by the App's bot (as a second ODW deployment
        # sharing the App's key would): nothing tells the two apart.
        repo = fake.repos[REPO]
        return routes_actions.create_run(
            fake, repo, run.workflow, run.ref, run.inputs, fake.bot_login
        )

    made = _second_run_on_dispatch(fake, twin)
    service.run_app()
    fault = wait_until(
        "the attempt's infrastructure fault",
        lambda: next(
            (
                e
                for e in _events(service)
                if e["type"] == "fault-recorded" and "does not guess" in e["detail"]
            ),
            None,
        ),
        timeout=90,
    )
    assert fault["kind"] == "infra" and fault["stage"] == "plan"
    (twin_run,) = made
    record = _dispatches(service)[twin_run.inputs["token"]]
    assert "does not guess" in record["ambiguous"]
    assert "workflowRun" not in record, "a run was guessed for the ambiguous dispatch"


def test_an_ingestion_that_gives_up_ends_the_attempt_as_an_infrastructure_fault(
    fake: FakeGitHub, service: Service, forge_repo: Repository, actions: LocalActions
) -> None:
    """The run's verdict is never readable (its artifacts refused five times):
    the task does not stay `running`; the attempt ends as an infra fault and
    the retry lands it."""
    refused = Fault(403, body={"message": "Resource not accessible by integration"})
    ready = threading.Event()

    def hold(run: s.WorkflowRun) -> bool:
        if run.inputs.get("stage") == "plan" and not ready.is_set():
            fake.inject("GET", "/repos/{owner}/{repo}/actions/runs/{run_id}/artifacts", refused, 5)
            ready.set()
        return True

    actions.admit = hold
    service.run_app()
    fault = wait_until(
        "the attempt's infrastructure fault",
        lambda: next(
            (
                e
                for e in _events(service)
                if e["type"] == "fault-recorded" and "could not be read" in e["detail"]
            ),
            None,
        ),
        timeout=120,
    )
    assert fault["kind"] == "infra" and fault["stage"] == "plan"
    wait_until("the task to land", lambda: trailers(forge_repo) == ["1.1"], timeout=240)
